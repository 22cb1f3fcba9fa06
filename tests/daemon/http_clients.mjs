// http_clients.mjs - HTTP clients of the daemon tests
// (tests/scripts/daemon/test_daemon_http*.sh):
//
//   es-bulk   --url U --n N [--index I]    the official Elasticsearch client's helpers.bulk
//   keepalive --url U --n N --batch B --out FILE [--stop FILE]
//             NDJSON batches to /ingest over one keep-alive connection,
//             each retried until acknowledged; FILE gets
//             {"acked":[first ids of acked batches], "retried":[...], "batch":B}
//   otlp      --url U/v1/logs --n N --proto 0|1   the OpenTelemetry JS logs SDK
//   hostile   --host H --port P --auth-port A --token T [--metrics-port M]
//             on the ingest port P and the metrics port M at once:
//             slowloris, 1,000 idle keep-alive connections held while
//             good clients are answered, a 100 MiB body, a gzip bomb,
//             smuggling, garbage; a wrong token on A: PASS/FAIL lines
//
// Records are {"src": ..., "i": k} with k from 0.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../interop/package.json', import.meta.url));
const sleep = ms => new Promise(r => setTimeout(r, ms));

function args(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  return o;
}

async function esBulk(o) {
  const { Client } = require('@elastic/elasticsearch');
  const client = new Client({ node: o.url, maxRetries: 5, requestTimeout: 60000 });
  const n = Number(o.n);
  const docs = Array.from({ length: n }, (_, i) => ({ src: 'es', i, msg: `doc ${i}` }));
  const stats = await client.helpers.bulk({
    datasource: docs,
    onDocument: () => ({ index: { _index: o.index || 'logs-es' } }),
    flushBytes: 64 * 1024,
    concurrency: 4,
    onDrop: d => console.error('dropped', JSON.stringify(d).slice(0, 300)),
  });
  console.log(JSON.stringify(stats));
  await client.close();
  process.exit(stats.failed === 0 && stats.successful === n ? 0 : 1);
}

// One POST on agent; resolves {status, body} or rejects.
function post(url, body, agent, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, timeout: 10000,
      headers: { 'Content-Type': 'application/x-ndjson', 'Content-Length': body.length, ...headers } },
    res => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', d => b += d);
      res.on('end', () => resolve({ status: res.statusCode, body: b }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function keepalive(o) {
  const n = Number(o.n), batch = Number(o.batch);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const acked = [], retried = [];
  const deadline = Date.now() + 300000;
  for (let first = 0; first < n; first += batch) {
    let lines = '';
    for (let i = first; i < Math.min(n, first + batch); i++)
      lines += JSON.stringify({ src: 'ka', i, pad: 'x'.repeat(40) }) + '\n';
    const body = Buffer.from(lines);
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > deadline) { console.error('deadline'); process.exit(2); }
      if (attempt > 0 && !retried.includes(first)) retried.push(first);
      try {
        const r = await post(o.url, body, agent);
        if (r.status === 200) { acked.push(first); break; }
      } catch (e) { /* no reply: retry */ }
      await sleep(100);
    }
  }
  fs.writeFileSync(o.out, JSON.stringify({ acked, retried, batch, n }));
  console.log(`sent ${n} records in ${acked.length} batches, ${retried.length} retried`);
}

// The OpenTelemetry JS logs SDK with the JSON (otlp-http) or protobuf
// (otlp-proto) exporter; records carry a span context, so trace and span
// ids travel too.
async function otlp(o) {
  const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const api = require('@opentelemetry/api');
  const proto = o.proto === '1';
  const { OTLPLogExporter } = require(proto ? '@opentelemetry/exporter-logs-otlp-proto'
                                            : '@opentelemetry/exporter-logs-otlp-http');
  let failures = 0;
  const exporter = new OTLPLogExporter({ url: o.url });
  const exp = exporter.export.bind(exporter);
  exporter.export = (logs, cb) => exp(logs, r => { if (r.code !== 0) { failures++; console.error(r.error); } cb(r); });
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'parqd-otel-test' }),
    processors: [new BatchLogRecordProcessor({ exporter, maxExportBatchSize: 500,
      maxQueueSize: 100000, scheduledDelayMillis: 20 })],
  });
  const logger = provider.getLogger('parqd-test-scope', '1.2.3');
  const src = proto ? 'otlp-proto' : 'otlp-json';
  const ctx = api.trace.setSpanContext(api.context.active(), {
    traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174',
    traceFlags: 1 });
  const n = Number(o.n);
  for (let i = 0; i < n; i++) {
    logger.emit({ severityNumber: 9, severityText: 'INFO', body: `record ${i}`, context: ctx,
                  attributes: { src, 'user.id': i, 'http.ok': true } });
    if (i % 1000 === 999) await sleep(5);
  }
  await provider.forceFlush();
  await provider.shutdown();
  console.log(`${src}: ${n} records emitted, ${failures} failed exports`);
  process.exit(failures ? 1 : 0);
}

// ---- hostile ----------------------------------------------------------

let failed = 0;
const pass = m => console.log(`PASS ${m}`);
const fail = (m, why) => { failed++; console.log(`FAIL ${m}: ${why}`); };

// Sends raw bytes, returns what came back until close or timeoutMs.
function raw(host, port, chunks, timeoutMs = 15000, gapMs = 0) {
  return new Promise(resolve => {
    const s = net.connect(port, host);
    let got = '', done = false;
    const end = why => { if (!done) { done = true; s.destroy(); resolve({ got, why }); } };
    s.on('data', d => { got += d.toString('latin1'); });
    s.on('close', () => end('closed'));
    s.on('error', () => end('error'));
    setTimeout(() => end('timeout'), timeoutMs);
    s.on('connect', async () => {
      for (const c of chunks) {
        if (done) return;
        s.write(c);
        if (gapMs) await sleep(gapMs);
      }
    });
  });
}

const status = r => (/^HTTP\/1\.1 (\d{3})/.exec(r.got) || [])[1];

async function expectStatus(name, p, want, closed = true) {
  const r = await p;
  const st = status(r);
  // A close while the peer still sends may reach it as a reset: both end it.
  if (st === String(want) && (!closed || r.why === 'closed' || r.why === 'error')) pass(name);
  else fail(name, `status ${st} (${r.why}): ${r.got.slice(0, 120).replace(/\r\n/g, ' | ')}`);
}

// n connections that each made one request (req) and had it answered,
// now idle between requests as keep-alive clients leave them.
async function idleKeepAlive(H, P, n, req) {
  const one = () => new Promise(resolve => {
    const s = net.connect(P, H);
    const t = setTimeout(() => resolve(s), 10000);
    s.on('error', () => { clearTimeout(t); resolve(null); });
    s.once('data', () => { clearTimeout(t); resolve(s); });
    s.on('connect', () => s.write(req));
  });
  const socks = [];
  for (let i = 0; i < n; i += 100)
    socks.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, one))));
  return socks.filter(Boolean);
}

// Ten good requests while the idle and slowloris clients are held: on an
// ingest port 10 POSTs of 100 records ({"src":"hostile-good","i":k},
// which must all land), on the metrics port 10 scrapes. Resolves the
// statuses.
async function goodRequests(H, P, kind) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const statuses = [];
  for (let b = 0; b < 10; b++) {
    try {
      if (kind === 'ingest') {
        let lines = '';
        for (let i = b * 100; i < (b + 1) * 100; i++) lines += JSON.stringify({ src: 'hostile-good', i }) + '\n';
        statuses.push((await post(`http://${H}:${P}/ingest`, Buffer.from(lines), agent)).status);
      } else {
        const r = await raw(H, P, ['GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'], 10000);
        statuses.push(Number(status(r)) || r.why);
      }
    } catch (e) { statuses.push(e.message); }
  }
  agent.destroy();
  return statuses;
}

// Everything hostile on one port (kind 'ingest' or 'metrics').
async function hostilePort(H, P, kind) {
  const path = kind === 'ingest' ? '/ingest' : '/metrics';
  const probe = kind === 'ingest' ? 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' : 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
  const name = m => `${kind} port: ${m}`;
  const rec = '{"src":"hostile","i":0}\n';
  // slowloris: a header byte every 500 ms; 408 once the header timeout passed.
  const slow = `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Slow: ` + 'a'.repeat(60);
  const slowloris = Array.from({ length: 5 }, () => raw(H, P, [...slow], 30000, 500));
  const idle = await idleKeepAlive(H, P, 1000, probe);
  const statuses = await goodRequests(H, P, kind);
  const open = idle.filter(s => !s.destroyed && s.readyState === 'open').length;
  const what = `10 good ${kind === 'ingest' ? 'POSTs of 100 records' : 'scrapes'} answered 200 while ` +
               `${idle.length} idle keep-alive connections (${open} still open) and 5 slowloris clients are held`;
  if (idle.length === 1000 && statuses.every(s => s === 200)) pass(name(what));
  else fail(name(what), `${idle.length} idle made, statuses ${statuses.join(',')}`);
  idle.forEach(s => s.destroy());
  // 100 MiB body: refused by its Content-Length, before it is read.
  await expectStatus(name('a 100 MiB body gets 413 and a close'),
    raw(H, P, [`POST ${path} HTTP/1.1\r\nContent-Length: 104857600\r\n\r\n`, Buffer.alloc(1 << 20, 'a')]), 413);
  // gzip bomb: 100 MiB of newlines in ~100 KiB.
  const bomb = zlib.gzipSync(Buffer.alloc(100 << 20, '\n'), { level: 9 });
  await expectStatus(name(`a gzip bomb (${bomb.length} bytes -> 100 MiB) gets 413 and a close`),
    raw(H, P, [`POST ${path} HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\n\r\n`, bomb]), 413);
  await expectStatus(name('Content-Length with Transfer-Encoding gets 400 and a close'),
    raw(H, P, [`POST ${path} HTTP/1.1\r\nContent-Length: ${rec.length}\r\nTransfer-Encoding: chunked\r\n\r\n${rec.length.toString(16)}\r\n${rec}\r\n0\r\n\r\n`]), 400);
  await expectStatus(name('two different Content-Lengths get 400 and a close'),
    raw(H, P, [`POST ${path} HTTP/1.1\r\nContent-Length: ${rec.length}\r\nContent-Length: 3\r\n\r\n${rec}`]), 400);
  await expectStatus(name('garbage gets 400 and a close'), raw(H, P, [Buffer.from('\x16\x03\x01garbage\r\n\r\n', 'latin1')]), 400);
  await expectStatus(name('more than 16 KiB of headers get 431 and a close'),
    raw(H, P, [`GET ${path} HTTP/1.1\r\nX-Big: ` + 'b'.repeat(20000) + '\r\n\r\n']), 431);
  let i = 0;
  for (const p of slowloris)
    await expectStatus(name(`slowloris client ${++i} gets 408 and a close`), p, 408);
}

async function hostile(o) {
  const H = o.host, P = Number(o.port), A = Number(o['auth-port']), M = Number(o['metrics-port']);
  const rec = '{"src":"hostile","i":0}\n';
  await Promise.all([hostilePort(H, P, 'ingest'), M ? hostilePort(H, M, 'metrics') : null]);
  await expectStatus('a wrong bearer token gets 401',
    raw(H, A, [`POST /ingest HTTP/1.1\r\nAuthorization: Bearer wrong\r\nContent-Length: ${rec.length}\r\n\r\n${rec}`]), 401);
  await expectStatus('no credentials get 401', raw(H, A, [`POST /ingest HTTP/1.1\r\nContent-Length: ${rec.length}\r\n\r\n${rec}`]), 401);
  await expectStatus('the right bearer token gets 200',
    raw(H, A, [`POST /ingest HTTP/1.1\r\nAuthorization: Bearer ${o.token}\r\nConnection: close\r\nContent-Length: ${rec.length}\r\n\r\n${rec}`]), 200);
  process.exit(failed ? 1 : 0);
}

const [cmd, ...rest] = process.argv.slice(2);
const o = args(rest);
if (cmd === 'es-bulk') await esBulk(o);
else if (cmd === 'keepalive') await keepalive(o);
else if (cmd === 'otlp') await otlp(o);
else if (cmd === 'hostile') await hostile(o);
else { console.error('usage: http_clients.mjs es-bulk|keepalive|hostile ...'); process.exit(2); }
