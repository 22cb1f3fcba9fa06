// daemon_rate.mjs - a steady sender for the sidecar simulation of
// bench_daemon.sh: cycles through the lines of FILE at --rate lines a
// second for --seconds over one TCP connection, in 10 ms ticks, as an
// application's log shipper would; prints what it sent.
//
//   node daemon_rate.mjs --port P --rate 6000 --seconds 60 FILE
import fs from 'node:fs';
import net from 'node:net';

const args = process.argv.slice(2);
const opt = k => { const i = args.indexOf(`--${k}`); return i >= 0 ? args[i + 1] : undefined; };
const file = args[args.length - 1];
const rate = Number(opt('rate') || 6000), seconds = Number(opt('seconds') || 60);
const lines = fs.readFileSync(file, 'utf8').split('\n').filter(l => l.length);
const sock = net.connect({ host: '127.0.0.1', port: Number(opt('port')) });
await new Promise((res, rej) => { sock.once('connect', res); sock.once('error', rej); });

const t0 = Date.now();
let sent = 0, bytes = 0, idx = 0;
while (Date.now() - t0 < seconds * 1000) {
  const due = Math.min(rate * seconds, Math.floor(((Date.now() - t0) / 1000) * rate));
  const batch = [];
  while (sent < due) {
    batch.push(lines[idx]);
    idx = (idx + 1) % lines.length;
    sent++;
  }
  if (batch.length) {
    const s = batch.join('\n') + '\n';
    bytes += Buffer.byteLength(s);
    if (!sock.write(s)) await new Promise(r => sock.once('drain', r));
  }
  await new Promise(r => setTimeout(r, 10));
}
await new Promise(r => sock.end(r));
console.log(`rate: ${sent} lines, ${bytes} bytes in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
