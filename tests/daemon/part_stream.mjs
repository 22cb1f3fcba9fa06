// part_stream.mjs - an endless sender of unique NDJSON lines for the
// partitioned crash tests (test_daemon_partition_crash.sh,
// test_s3_partition_crash.sh): line N is {"id":N,"svc":V,"ts":T,"pad":"..."},
// a function of N alone (lineFor). Lines come in runs of 10 of one value,
// the runs' values cycling over 300 (svcOf): one of them is "a/b= c" (a
// '/', an '=' and a space), and one run in 50 has no svc at all. ts, the
// event time (tsOf), walks over 30 hours of 2026-03-01/02 (HOURS, a new
// hour every 50 lines, then around again) with late records: one run in
// 6 is 1-5 hours behind the lines around it; one run in 40 has no ts and
// one line in 97 an unparsable one (the daemon routes those by their
// ingestion time); the hot runs' ts stay in the first hour, so their key's
// file is written all along and holds the watermark back; one run in 3 gives ts as epoch seconds (a number with
// a fraction), the others as RFC 3339 strings. As stream.mjs: about --rate lines a second over one
// connection at a time, reconnecting every 50 ms while the daemon is gone;
// SIGTERM ends cleanly.
//
//   node part_stream.mjs --target tcp:127.0.0.1:P --state FILE [--rate 1000]
//
// FILE gets {"next": N}: every id < N was handed to a socket at least once.
import fs from 'node:fs';
import net from 'node:net';
import { parseTarget, parseArgs, sleep } from './prng.mjs';

export const RUN = 10;
export const VALUES = 300;

// The run's svc: undefined (no field: one run in 50), or one of VALUES
// strings, consecutive runs taking values 7 apart (so every value comes
// once in 300 runs); value 7, the second run's, is "a/b= c". Every fourth
// run is "hot": its file stays open while others close, so the published
// files of other values are above the watermark and replay must skip them.
export function svcOf(id) {
  const run = Math.floor(id / RUN);
  if (run % 50 === 3) return undefined;
  if (run % 4 === 0) return 'hot';     /* stays open: holds the watermark back */
  const k = (run * 7) % VALUES;
  if (k === 7) return 'a/b= c';
  return `svc-${String(k).padStart(3, '0')}`;
}

export const HOURS = 30;
export const HOUR_LINES = 50;
const T0 = Date.UTC(2026, 2, 1) / 1000;    /* 2026-03-01T00:00:00Z */

// The event second of line id (null: none or unparsable, so the ingestion
// time routes it) and its JSON text.
export function tsOf(id) {
  const run = Math.floor(id / RUN);
  if (run % 40 === 9) return { sec: null, json: undefined };
  if (id % 97 === 13) return { sec: null, json: '"not a time"' };
  let hour = Math.floor(id / HOUR_LINES) % HOURS;
  if (run % 6 === 5) hour = Math.max(0, hour - 1 - (run % 5));   /* late */
  if (svcOf(id) === 'hot') hour = 0;   /* one key written all along: holds the watermark */
  const sec = T0 + hour * 3600 + (id * 37) % 3600;
  if (run % 3 === 1) return { sec, json: `${sec}.25` };
  return { sec, json: JSON.stringify(new Date(sec * 1000).toISOString()) };
}

export function lineFor(id) {
  const svc = svcOf(id);
  const ts = tsOf(id).json;
  const pad = ((id * 2654435761) >>> 0).toString(16).padStart(8, '0');
  return `{"id":${id}` + (svc === undefined ? '' : `,"svc":${JSON.stringify(svc)}`) +
         (ts === undefined ? '' : `,"ts":${ts}`) + `,"pad":"${pad}"}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const o = parseArgs(process.argv.slice(2), { rate: '1000' });
  const t = parseTarget(o.target);
  const perTick = Math.max(1, Math.round(Number(o.rate) / 100));
  let next = 1, stopping = false, sock = null;
  const save = () => fs.writeFileSync(o.state, JSON.stringify({ next }));
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
    while (!stopping && !broken) {
      const batch = [];
      for (let i = 0; i < perTick; i++) batch.push(lineFor(next + i));
      next += perTick;
      if (!sock.write(batch.join('\n') + '\n'))
        await new Promise(res => { sock.once('drain', res); sock.once('close', res); });
      await sleep(10);
    }
    if (broken) { sock.destroy(); await sleep(50); }
  }
  if (sock) await new Promise(res => { sock.end(res); setTimeout(res, 2000); });
  clearInterval(saver);
  save();
  process.exit(0);
}
