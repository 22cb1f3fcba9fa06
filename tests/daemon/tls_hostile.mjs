// tls_hostile.mjs - hostile clients of a TLS input (test_daemon_tls_hostile.sh),
// one kind per run:
//
//   halfopen  --host H --port P --count N --hold-s S --report FILE
//             N connections: half send nothing, half the first bytes of a
//             ClientHello record and nothing more; held until the server
//             closes them (at most S seconds). FILE gets how many
//             connected and how many the server closed.
//   slow      --host H --port P --ca CA
//             a real TLS client whose bytes reach the server one at a time,
//             100 ms apart (a local relay), so its handshake outlasts the
//             handshake timeout; prints how it ended
//   garbage   --host H --port P --count N --seed S
//             N connections sending random bytes (TLS-looking record
//             headers with random bodies, and plain noise)
//   broken    --host H --port P --ca CA --lines N --seed S --expect FILE
//             a TLS client that sends N valid records, then garbage on the
//             raw socket under the TLS session (a forged record); FILE
//             gets the N records (they must land: they were complete and
//             authentic before the forgery)
//
// Each prints one summary line; exit 1 only when the client itself failed.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { prng, seedFrom, parseArgs, sleep } from './prng.mjs';

const [mode, ...rest] = process.argv.slice(2);
const o = parseArgs(rest);
const host = o.host || '127.0.0.1';
const port = Number(o.port);

const closed = s => new Promise(res => (s.closed ? res() : s.once('close', res)));
const opened = s => new Promise((res, rej) => { s.once('connect', res); s.once('error', rej); });

// A TLS 1.2 handshake record header and the start of a ClientHello:
// enough for the server to wait for the rest of the record.
const HELLO_START = Buffer.from('1603010200010001fc0303', 'hex');

async function halfopen() {
  const n = Number(o.count), holdMs = Number(o['hold-s']) * 1000;
  let connected = 0, closedByServer = 0;
  const one = async i => {
    const s = net.connect({ host, port });
    s.on('error', () => {});
    try { await opened(s); } catch { return; }
    connected++;
    if (i % 2) s.write(HELLO_START);
    const t = setTimeout(() => s.destroy(), holdMs);
    s.on('end', () => { closedByServer++; s.destroy(); });
    s.resume();
    await closed(s);
    clearTimeout(t);
  };
  const all = [];
  for (let i = 0; i < n; i++) {
    all.push(one(i));
    if (i % 50 === 49) await sleep(20);    // do not overflow the listen backlog
  }
  await Promise.all(all);
  fs.writeFileSync(o.report, JSON.stringify({ connected, closedByServer }));
  console.log(`halfopen: ${connected}/${n} connected, ${closedByServer} closed by the server`);
}

async function slow() {
  // A relay: client -> relay (fast) -> server (one byte per 100 ms).
  const relay = net.createServer(c => {
    const up = net.connect({ host, port });
    up.on('error', () => c.destroy());
    c.on('error', () => up.destroy());
    const queue = [];
    let timer = setInterval(() => {
      const b = queue.shift();
      if (b !== undefined) up.write(Buffer.from([b]));
    }, 100);
    c.on('data', d => { for (const b of d) queue.push(b); });
    up.on('data', d => c.write(d));
    up.on('close', () => { clearInterval(timer); c.destroy(); });
    c.on('close', () => { clearInterval(timer); up.destroy(); });
  });
  await new Promise(res => relay.listen(0, '127.0.0.1', res));
  const t0 = Date.now();
  const s = tls.connect({ host: '127.0.0.1', port: relay.address().port, servername: 'localhost',
                          ca: fs.readFileSync(o.ca) });
  let how = 'closed before the handshake ended';
  s.on('secureConnect', () => { how = 'handshake completed'; s.end('{"slow":"tls"}\n'); });
  s.on('error', e => { how = `error ${e.code || e.message}`; });
  await closed(s);
  relay.close();
  console.log(`slow: ${how} after ${Date.now() - t0} ms`);
}

async function garbage() {
  const rand = prng(seedFrom(o.seed));
  const n = Number(o.count);
  const one = async i => {
    const s = net.connect({ host, port });
    s.on('error', () => {});
    try { await opened(s); } catch { return; }
    const body = rand.bytes(rand.int(1, 4000));
    if (i % 2) body.set([0x16, 0x03, 0x03], 0);      // a plausible record header
    s.end(body);
    s.resume();
    const t = setTimeout(() => s.destroy(), 10000);
    await closed(s);
    clearTimeout(t);
  };
  await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  console.log(`garbage: ${n} connections of random bytes sent`);
}

async function broken() {
  const rand = prng(seedFrom(o.seed));
  const raw = net.connect({ host, port });
  raw.on('error', () => {});
  await opened(raw);
  const s = tls.connect({ socket: raw, servername: 'localhost', ca: fs.readFileSync(o.ca) });
  let err = null;
  s.on('error', e => { err = e; });
  await new Promise((res, rej) => { s.once('secureConnect', res); s.once('error', rej); });
  const lines = [];
  for (let i = 1; i <= Number(o.lines); i++)
    lines.push(JSON.stringify({ id: i, tag: 'broken', r: rand.bytes(40).toString('base64') }));
  fs.writeFileSync(o.expect, lines.join('\n') + '\n');
  await new Promise(res => s.write(lines.join('\n') + '\n', res));
  await sleep(300);                                   // the records go out first
  // An application-data record the session never made: its MAC fails.
  const forged = Buffer.concat([Buffer.from('1703030040', 'hex'), rand.bytes(64)]);
  raw.write(forged);
  const t = setTimeout(() => raw.destroy(), 10000);
  await closed(raw);
  clearTimeout(t);
  console.log(`broken: ${lines.length} records, then a forged record; ` +
    `the server ${err ? `ended the session (${err.code || err.message})` : 'closed'}`);
}

const modes = { halfopen, slow, garbage, broken };
if (!modes[mode]) {
  console.error(`tls_hostile.mjs: unknown mode ${mode} (${Object.keys(modes).join(', ')})`);
  process.exit(2);
}
await modes[mode]();
