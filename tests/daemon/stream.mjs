// stream.mjs - an endless sender of unique NDJSON lines for the crash test:
// line N is {"id":N,"src":"crash","pad":"..."} (its content a function of N
// alone, see lineFor), written at about --rate lines a second over one
// connection at a time; when the connection fails (the daemon was killed)
// it reconnects every 50 ms until the daemon is back. SIGTERM ends the
// current connection cleanly and exits.
//
//   node stream.mjs --target tcp:127.0.0.1:P --state FILE [--rate 2000]
//        [--bad-every N]
//
// With --bad-every N, every line whose id is a multiple of N is not JSON
// (lineFor(id, N)): the daemon rejects it into the dead letters.
//
// FILE gets {"next": N} (every id < N was handed to a socket at least
// once; ids >= N never were) several times a second and at exit.
import fs from 'node:fs';
import net from 'node:net';
import { parseTarget, parseArgs, sleep } from './prng.mjs';

export function lineFor(id, badEvery = 0) {
  if (badEvery > 0 && id % badEvery === 0) return `{"id":${id},"src":"crash" not json}`;
  let h = (id * 2654435761) >>> 0;
  let pad = '';
  for (let i = 0; i < 6; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
    pad += h.toString(16).padStart(8, '0');
  }
  return `{"id":${id},"src":"crash","pad":"${pad}"}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const o = parseArgs(process.argv.slice(2), { rate: '2000', 'bad-every': '0' });
  const badEvery = Number(o['bad-every']);
  const t = parseTarget(o.target);
  const perTick = Math.max(1, Math.round(Number(o.rate) / 100));
  let next = 1, stopping = false, sock = null, connects = 0, failures = 0;
  const save = () => fs.writeFileSync(o.state, JSON.stringify({ next, connects, failures }));
  const saver = setInterval(save, 200);

  process.on('SIGTERM', () => { stopping = true; });

  while (!stopping) {
    sock = net.connect(t.path ? { path: t.path } : { host: t.host, port: t.port });
    let broken = false;
    sock.on('error', () => { broken = true; });
    sock.on('close', () => { broken = true; });
    const up = await new Promise(res => {
      sock.once('connect', () => res(true));
      sock.once('error', () => res(false));
    });
    if (!up) { await sleep(50); continue; }
    connects++;
    while (!stopping && !broken) {
      const batch = [];
      for (let i = 0; i < perTick; i++) batch.push(lineFor(next + i, badEvery));
      next += perTick;
      if (!sock.write(batch.join('\n') + '\n'))
        await new Promise(res => { sock.once('drain', res); sock.once('close', res); });
      await sleep(10);
    }
    if (broken) { failures++; sock.destroy(); await sleep(50); }
  }
  if (sock) await new Promise(res => { sock.end(res); setTimeout(res, 2000); });
  clearInterval(saver);
  save();
  process.exit(0);
}
