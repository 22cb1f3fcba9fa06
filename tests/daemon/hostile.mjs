// hostile.mjs - the clients of test_daemon_hostile.sh, one kind per run:
//
//   garbage   --target T --lines N --seed S --expect FILE
//             random binary lines (NUL, invalid UTF-8, control bytes), each
//             certainly not JSON; FILE gets each line's base64, one a line
//   longline  --target T --bytes N
//             one line of N bytes and no newline, streamed from one reused
//             64 KiB buffer (never built in memory), then a clean close
//   slowloris --target T --line TEXT [--min-ms 1000 --max-ms 2000]
//             TEXT and a newline, one byte at a time with pauses
//   idle      --target T --count N --wait-s S --report FILE
//             N connections that send nothing; FILE gets how many the
//             server closed and after how long (min/max seconds)
//   good      --target T --lines N --seed S --expect FILE
//             N valid records in random-sized writes; FILE gets them
//
// Each prints one summary line; exit 1 when the client itself failed.
import fs from 'node:fs';
import net from 'node:net';
import { prng, seedFrom, parseTarget, parseArgs, sleep } from './prng.mjs';

const [mode, ...rest] = process.argv.slice(2);
const o = parseArgs(rest);
const t = parseTarget(o.target);
const connect = () => net.connect(t.path ? { path: t.path } : { host: t.host, port: t.port });

function opened(sock) {
  return new Promise((res, rej) => { sock.once('connect', res); sock.once('error', rej); });
}

async function writeAll(sock, buf) {
  if (!sock.write(buf)) await new Promise((res, rej) => { sock.once('drain', res); sock.once('error', rej); });
}

async function endAndWait(sock) {
  await new Promise(res => sock.end(res));
  await new Promise(res => (sock.closed ? res() : sock.once('close', res)));
}

async function sendLines(lines, rand) {
  const data = Buffer.concat(lines.flatMap(l => [l, Buffer.from('\n')]));
  const sock = connect();
  await opened(sock);
  for (let off = 0; off < data.length;) {
    const n = Math.min(rand.int(1, 16384), data.length - off);
    await writeAll(sock, data.subarray(off, off + n));
    off += n;
  }
  await endAndWait(sock);
  return data.length;
}

async function garbage() {
  const seed = seedFrom(o.seed), rand = prng(seed);
  const prefixes = [Buffer.from('!'), Buffer.from([0xff]), Buffer.from([0]), Buffer.from('{\x01')];
  const lines = [];
  for (let i = 0; i < Number(o.lines); i++) {
    const body = rand.bytes(rand.int(0, 1500));
    for (let j = 0; j < body.length; j++) if (body[j] === 0x0a) body[j] = 0x0b;
    if (body.length && body[body.length - 1] === 0x0d) body[body.length - 1] = 0x2e;
    lines.push(Buffer.concat([prefixes[i % prefixes.length], body]));
  }
  fs.writeFileSync(o.expect, lines.map(l => l.toString('base64')).join('\n') + '\n');
  const bytes = await sendLines(lines, rand);
  console.log(`garbage: seed ${seed}, ${lines.length} lines, ${bytes} bytes`);
}

async function longline() {
  const total = Number(o.bytes);
  const head = Buffer.from('{"big":"');
  const chunk = Buffer.alloc(65536, 'x');
  const sock = connect();
  await opened(sock);
  await writeAll(sock, head);
  let sent = head.length;
  const t0 = Date.now();
  while (sent < total) {
    const n = Math.min(chunk.length, total - sent);
    await writeAll(sock, n === chunk.length ? chunk : chunk.subarray(0, n));
    sent += n;
  }
  await endAndWait(sock);
  console.log(`longline: ${sent} bytes without a newline in ${Date.now() - t0} ms`);
}

async function slowloris() {
  const data = Buffer.from(o.line + '\n');
  const lo = Number(o['min-ms'] || 1000), hi = Number(o['max-ms'] || 2000);
  const rand = prng(seedFrom(o.seed));
  const sock = connect();
  let closedEarly = false;
  sock.on('close', () => { closedEarly = true; });
  sock.on('error', () => {});
  await opened(sock);
  const t0 = Date.now();
  for (let i = 0; i < data.length && !closedEarly; i++) {
    sock.write(data.subarray(i, i + 1));
    if (i < data.length - 1) await sleep(rand.int(lo, hi));
  }
  if (closedEarly) {
    console.log(`slowloris: the server closed the connection after ${Date.now() - t0} ms, mid-line`);
    process.exit(1);
  }
  await endAndWait(sock);
  console.log(`slowloris: ${data.length} bytes, one at a time, over ${Date.now() - t0} ms`);
}

async function idle() {
  const n = Number(o.count), waitS = Number(o['wait-s'] || 20);
  const socks = [];
  const closedAfter = [];
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const s = connect();
    const rec = { t0: 0, closed: false };
    s.on('connect', () => { rec.t0 = Date.now(); });
    s.on('error', () => { errors++; });
    s.on('close', () => { rec.closed = true; if (rec.t0) closedAfter.push((Date.now() - rec.t0) / 1000); });
    s.resume();
    socks.push([s, rec]);
    if (i % 200 === 199) await sleep(50); // stay within the accept backlog
  }
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline && socks.some(([, r]) => !r.closed)) await sleep(100);
  const connected = socks.filter(([, r]) => r.t0 > 0).length;
  const open = socks.filter(([, r]) => !r.closed).length;
  for (const [s] of socks) s.destroy();
  const report = {
    count: n, connected, closedByServer: closedAfter.length, stillOpen: open, errors,
    minS: closedAfter.length ? Math.min(...closedAfter) : null,
    maxS: closedAfter.length ? Math.max(...closedAfter) : null,
  };
  fs.writeFileSync(o.report, JSON.stringify(report));
  console.log(`idle: ${JSON.stringify(report)}`);
}

async function good() {
  const seed = seedFrom(o.seed), rand = prng(seed);
  const lines = [];
  for (let i = 1; i <= Number(o.lines); i++)
    lines.push(Buffer.from(JSON.stringify({ id: i, kind: 'good', n: rand.int(0, 1e9), s: `v${rand.int(0, 99)}`, ok: i % 3 === 0 })));
  fs.writeFileSync(o.expect, lines.map(l => l.toString()).join('\n') + '\n');
  const bytes = await sendLines(lines, rand);
  console.log(`good: seed ${seed}, ${lines.length} lines, ${bytes} bytes`);
}

const modes = { garbage, longline, slowloris, idle, good };
if (!modes[mode]) {
  console.error(`usage: hostile.mjs ${Object.keys(modes).join('|')} --target T ...`);
  process.exit(2);
}
try {
  await modes[mode]();
} catch (e) {
  console.log(`${mode}: failed: ${e.message}`);
  process.exit(1);
}
