// send.mjs - many concurrent NDJSON clients, as real log shippers behave:
// the non-blank lines of the input files are dealt out at random to
// --clients connections, each connection's bytes are cut at random byte
// boundaries (inside lines and UTF-8 characters too) into writes with small
// random delays, blank lines are sprinkled in, and some connections close
// without a final newline. Targets rotate over the --targets list.
//
//   node send.mjs --targets tcp:127.0.0.1:P,tcp:[::1]:P,unix:/x.sock,tls:127.0.0.1:P
//        [--clients 50] [--seed N] [--blank 200] [--max-chunk 8192]
//        [--max-delay-ms 3] [--bulk] [--ca CA.pem] [--cert C.pem --key K.pem] FILE...
//
// tls: targets connect with TLS (server name "localhost", verified
// against --ca; --cert/--key present a client certificate).
//
// --bulk (benchmarks): 64 KiB writes, no delays, lines dealt round-robin.
// Prints the seed first (pass it back with --seed to repeat a run), then
// one summary line. Exit 1 when a connection failed.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { prng, seedFrom, parseTarget, parseArgs, sleep } from './prng.mjs';

const o = parseArgs(process.argv.slice(2), {
  clients: '50', blank: '200', 'max-chunk': '8192', 'max-delay-ms': '3',
});
const seed = seedFrom(o.seed);
console.log(`send: seed ${seed}`);
const rand = prng(seed);
const targets = String(o.targets).split(',').filter(Boolean).map(parseTarget);
const nclients = Number(o.clients);
const maxChunk = Number(o['max-chunk']);
const bulk = o.bulk === true;
const maxDelay = bulk ? 0 : Number(o['max-delay-ms']);
const tlsOpts = {};
if (o.ca) tlsOpts.ca = fs.readFileSync(o.ca);
if (o.cert) tlsOpts.cert = fs.readFileSync(o.cert);
if (o.key) tlsOpts.key = fs.readFileSync(o.key);

// Every non-blank line of every file.
const lines = [];
for (const f of o._) {
  const buf = fs.readFileSync(f);
  let start = 0;
  for (let i = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === 0x0a) {
      if (i > start) lines.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
}

const per = Array.from({ length: nclients }, () => []);
lines.forEach((l, i) => per[bulk ? i % nclients : rand.int(0, nclients - 1)].push(l));

// Blank lines go between lines, never inside one.
const blankTarget = Number(o.blank);
let blankSent = 0;
const streams = per.map((ls, i) => {
  const parts = [];
  ls.forEach((l, j) => {
    const last = j === ls.length - 1;
    parts.push(l);
    if (!last || i % 5 !== 4) parts.push(Buffer.from('\n')); // every 5th: no final newline
    if (!last && blankSent < blankTarget && rand() < 0.05) {
      const n = rand.int(1, 3);
      parts.push(Buffer.from('\n'.repeat(n)));
      blankSent += n;
    }
  });
  return Buffer.concat(parts);
});

function chunkSize() {
  if (bulk) return 65536;
  const r = rand();
  if (r < 0.3) return rand.int(1, 16);
  if (r < 0.8) return rand.int(17, 1024);
  return rand.int(1025, maxChunk);
}

async function client(i, data) {
  const t = targets[i % targets.length];
  // Plan the writes before connecting: the PRNG sequence must not depend
  // on timing, so a seed always gives the same cuts.
  const plan = [];
  for (let off = 0; off < data.length;) {
    const n = Math.min(chunkSize(), data.length - off);
    plan.push([off, n, rand.int(0, maxDelay)]);
    off += n;
  }
  const sock = t.tls
    ? tls.connect({ host: t.host, port: t.port, servername: 'localhost', ...tlsOpts })
    : net.connect(t.path ? { path: t.path } : { host: t.host, port: t.port });
  sock.setNoDelay(true);
  let failed = null;
  sock.on('error', e => { failed = failed || e; });
  await new Promise((res, rej) => {
    sock.once(t.tls ? 'secureConnect' : 'connect', res);
    sock.once('error', rej);
  });
  for (const [off, n, delay] of plan) {
    if (failed) break;
    if (!sock.write(data.subarray(off, off + n)))
      await new Promise(r => sock.once('drain', r));
    if (delay > 0) await sleep(delay);
  }
  await new Promise(res => { sock.end(() => res()); });
  await new Promise(res => { if (sock.closed) res(); else sock.once('close', res); });
  if (failed) throw new Error(`client ${i} (${t.kind}): ${failed.message}`);
  return t.kind;
}

const t0 = Date.now();
const results = await Promise.allSettled(streams.map((d, i) => client(i, d)));
const bad = results.filter(r => r.status === 'rejected');
const kinds = {};
for (const r of results) if (r.status === 'fulfilled') kinds[r.value] = (kinds[r.value] || 0) + 1;
const bytes = streams.reduce((s, b) => s + b.length, 0);
console.log(`send: ${lines.length} lines, ${blankSent} blank lines, ${bytes} bytes over ${nclients} clients ` +
  `(${Object.entries(kinds).map(([k, v]) => `${k} ${v}`).join(', ')}) in ${Date.now() - t0} ms`);
for (const r of bad) console.log(`send: ${r.reason.message}`);
process.exit(bad.length ? 1 : 0);
