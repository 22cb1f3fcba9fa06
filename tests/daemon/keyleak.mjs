// keyleak.mjs - looks for secret key material in what parqd let out (its
// logs, /metrics bodies saved by the test, stderr of failed starts),
// printing one PASS/FAIL line per key for the calling test script.
//
//   node keyleak.mjs [--pem KEY.pem]... [--hex KEY.hex]... FILE...
//
// A PEM private key is searched for as its raw private scalar (any 8-byte
// window), the scalar in hex (any 16-digit window, either case), its DER
// encoding in hex, and each base64 line of the PEM text. A hex key file
// (the encryption keys) is searched for as its raw bytes (8-byte windows)
// and its hex text (16-digit windows, either case). 8 bytes / 16 digits of
// a random key appear in unrelated text with probability ~2^-64.
import fs from 'node:fs';
import crypto from 'node:crypto';

const pems = [], hexes = [], files = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--pem') pems.push(argv[++i]);
  else if (argv[i] === '--hex') hexes.push(argv[++i]);
  else files.push(argv[i]);
}

const haystacks = files.filter(f => fs.existsSync(f)).map(f => [f, fs.readFileSync(f)]);
let failed = 0;

function windows(buf, n) {
  const out = [];
  for (let i = 0; i + n <= buf.length; i++) out.push(buf.subarray(i, i + n));
  return out;
}

function textWindows(s, n) {
  const out = [];
  for (let i = 0; i + n <= s.length; i++) out.push(s.slice(i, i + n));
  return out;
}

function search(label, needles) {
  for (const [f, hay] of haystacks) {
    for (const [kind, nd] of needles) {
      if (hay.indexOf(nd) >= 0) {
        failed++;
        console.log(`FAIL no key bytes of ${label} in any log or metric: ${kind} found in ${f}`);
        return;
      }
    }
  }
  console.log(`PASS no key bytes of ${label} in any log or metric (${needles.length} patterns, ` +
    `${haystacks.length} files, ${haystacks.reduce((s, [, h]) => s + h.length, 0)} bytes)`);
}

for (const p of pems) {
  const pem = fs.readFileSync(p, 'utf8');
  const key = crypto.createPrivateKey(pem);
  const d = Buffer.from(key.export({ format: 'jwk' }).d, 'base64url');
  const der = key.export({ format: 'der', type: 'pkcs8' });
  const hex = d.toString('hex');
  const needles = [
    ...windows(d, 8).map(w => ['raw scalar bytes', w]),
    ...textWindows(hex, 16).flatMap(w => [['hex scalar', Buffer.from(w)], ['HEX scalar', Buffer.from(w.toUpperCase())]]),
    ...textWindows(der.toString('hex'), 32).map(w => ['DER hex', Buffer.from(w)]),
    ...pem.split('\n').filter(l => l.length >= 16 && !l.startsWith('-----')).map(l => ['PEM line', Buffer.from(l)]),
  ];
  search(p, needles);
}

for (const h of hexes) {
  const hex = fs.readFileSync(h, 'utf8').trim().toLowerCase();
  const raw = Buffer.from(hex, 'hex');
  const needles = [
    ...windows(raw, 8).map(w => ['raw key bytes', w]),
    ...textWindows(hex, 16).flatMap(w => [['hex key', Buffer.from(w)], ['HEX key', Buffer.from(w.toUpperCase())]]),
  ];
  search(h, needles);
}

if (haystacks.length === 0) {
  failed++;
  console.log('FAIL keyleak: no file to search');
}
process.exit(failed ? 1 : 0);
