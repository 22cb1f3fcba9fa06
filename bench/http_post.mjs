// http_post.mjs - the HTTP side of bench/bench_http.sh: one process, one
// keep-alive connection per input file (16 in the bench), each posting
// its file to /ingest in bodies of about --body bytes (whole lines), the
// next only once the previous one was acknowledged. Prints one JSON line:
// {"requests": N, "bytes": B, "lat_ms": [sorted acknowledgement latencies]}.
//
// usage: node http_post.mjs --url http://127.0.0.1:P/ingest [--body 1048576] FILE...
import fs from 'node:fs';
import http from 'node:http';

const argv = process.argv.slice(2);
let url = '', body = 1 << 20;
const files = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--url') url = argv[++i];
  else if (argv[i] === '--body') body = Number(argv[++i]);
  else files.push(argv[i]);
}

function post(agent, buf) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent,
      headers: { 'Content-Type': 'application/x-ndjson', 'Content-Length': buf.length } }, res => {
      res.resume();
      res.on('end', () => res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)));
    });
    req.on('error', reject);
    req.end(buf);
  });
}

const lat = [];
let requests = 0, bytes = 0;
async function one(file) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const data = fs.readFileSync(file);
  for (let off = 0; off < data.length;) {
    let end = Math.min(data.length, off + body);
    if (end < data.length) end = data.lastIndexOf(10, end - 1) + 1 || data.length;
    const chunk = data.subarray(off, end);
    for (;;) {
      const t0 = process.hrtime.bigint();
      try {
        await post(agent, chunk);
        lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
        break;
      } catch (e) {
        if (!/429/.test(e.message)) throw e;
        await new Promise(r => setTimeout(r, 50));   // backpressure: Retry-After
      }
    }
    requests++;
    bytes += chunk.length;
    off = end;
  }
  agent.destroy();
}
await Promise.all(files.map(one));
lat.sort((a, b) => a - b);
console.log(JSON.stringify({ requests, bytes, lat_ms: lat }));
