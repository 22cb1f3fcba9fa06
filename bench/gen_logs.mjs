// gen_logs.mjs - deterministic generator of realistic NDJSON logs for the
// benchmarks: the same KIND, SEED and size give the same bytes on every
// machine (mulberry32, as tests/daemon/prng.mjs; no Math.random, no clock).
//
//   access  HTTP access logs, ~700 bytes a line: RFC 3339 timestamps with
//           milliseconds and varied offsets (or Z), nested request /
//           response / client objects, trace and span ids, tag arrays, and
//           fields present in some lines only (user_id, referer, error).
//           conf/schemas/access.yaml is their typed schema.
//   app     application logs: a level distribution, service names,
//           templated messages with variables, nested context objects,
//           now and then an exception with a stack.
//   mixed   both, interleaved (about 2 access lines to 1 app line).
//
// Values are drawn from skewed distributions (a few hot routes, mostly
// 200s, log-normal latencies, a recurring user population) because
// uniform random data flatters no encoder and real logs are not uniform.
//
// usage: node gen_logs.mjs [--kind access|app|mixed] [--seed N] [--mb M] OUT
//        (defaults: access, seed 1, 200 MiB; OUT "-" writes to stdout)
import fs from 'fs';

const args = { kind: 'access', seed: '1', mb: '200', _: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a.startsWith('--')) args[a.slice(2)] = process.argv[++i];
  else args._.push(a);
}
const out = args._[0];
const target = Number(args.mb) * 1024 * 1024;
if (!out || !(target > 0) || !['access', 'app', 'mixed'].includes(args.kind)) {
  console.error('usage: node gen_logs.mjs [--kind access|app|mixed] [--seed N] [--mb M] OUT');
  process.exit(1);
}

// ---- PRNG and draws ----------------------------------------------------------
let state = Number(args.seed) >>> 0;
function rand() { // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
const pick = a => a[Math.floor(rand() * a.length)];
const chance = p => rand() < p;
const HEX = '0123456789abcdef';
const hex = n => { let s = ''; for (let i = 0; i < n; i++) s += HEX[Math.floor(rand() * 16)]; return s; };
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const alnum = n => { let s = ''; for (let i = 0; i < n; i++) s += ALNUM[Math.floor(rand() * 36)]; return s; };
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick('89ab')}${hex(3)}-${hex(12)}`;
function normal() { // Box-Muller
  const u = 1 - rand(), v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
// weighted([[value, weight], ...]) -> a draw function
function weighted(table) {
  const total = table.reduce((s, [, w]) => s + w, 0);
  return () => {
    let r = rand() * total;
    for (const [v, w] of table) if ((r -= w) < 0) return v;
    return table[table.length - 1][0];
  };
}
// Zipf-like: index i with weight 1/(i+1)^s, for hot keys in a population.
function zipf(n, s = 1.1) {
  const cdf = [];
  let acc = 0;
  for (let i = 0; i < n; i++) cdf.push(acc += 1 / Math.pow(i + 1, s));
  return () => {
    const r = rand() * acc;
    let lo = 0, hi = n - 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (cdf[m] < r) lo = m + 1; else hi = m; }
    return lo;
  };
}

// ---- time ---------------------------------------------------------------------
// One clock for the stream, advancing a few ms a line (several hosts
// writing into one stream, so a line can be up to 50 ms "late").
let clock = Date.UTC(2024, 4, 14, 6, 0, 0, 0);
const OFFSETS = weighted([[0, 40], [120, 15], [60, 10], [-300, 10], [-420, 8], [330, 5], [540, 5], [-240, 4], [600, 3]]);
const p2 = n => (n < 10 ? '0' : '') + n;
const p3 = n => (n < 10 ? '00' : n < 100 ? '0' : '') + n;
function rfc3339(ms, offMin, zulu) {
  const d = new Date(ms + offMin * 60000);
  const base = `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${p3(d.getUTCMilliseconds())}`;
  if (zulu) return base + 'Z';
  const a = Math.abs(offMin);
  return `${base}${offMin < 0 ? '-' : '+'}${p2(Math.floor(a / 60))}:${p2(a % 60)}`;
}
function stamp() {
  clock += int(0, 6);
  const off = OFFSETS();
  return rfc3339(clock - int(0, 50), off, off === 0 && chance(0.8));
}

// ---- shared vocabularies ----------------------------------------------------
// Pod names: deployment, replica-set hash, pod suffix.
const HOSTS = Array.from({ length: 24 }, (_, i) =>
  `${['edge-gw', 'shop-web', 'api-gw'][i % 3]}-${['7d9f8c6b5', '5c4b9d7f8'][i & 1]}-${alnum(5)}`);
const USERS = Array.from({ length: 5000 }, (_, i) => `u_${(0x5a17 + i * 7919).toString(36)}${alnum(4)}`);
const userDraw = zipf(USERS.length, 0.9);
const GEO = [
  ['DE', ['Berlin', 'Munich', 'Hamburg', 'Frankfurt am Main', 'Cologne']],
  ['US', ['New York', 'San Francisco', 'Chicago', 'Austin', 'Seattle', 'Boston']],
  ['GB', ['London', 'Manchester', 'Edinburgh']],
  ['FR', ['Paris', 'Lyon', 'Marseille']],
  ['NL', ['Amsterdam', 'Rotterdam']],
  ['IN', ['Bengaluru', 'Mumbai', 'Delhi']],
  ['BR', ['São Paulo', 'Rio de Janeiro']],
  ['JP', ['Tokyo', 'Osaka']],
  ['PL', ['Warsaw', 'Kraków', 'Wrocław']],
  ['SE', ['Stockholm', 'Göteborg']],
  ['CA', ['Toronto', 'Montréal', 'Vancouver']],
  ['AU', ['Sydney', 'Melbourne']],
];
const geoDraw = zipf(GEO.length, 0.8);

// ---- access logs --------------------------------------------------------------
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80',
  'okhttp/4.12.0',
  'python-requests/2.31.0',
  'curl/8.5.0',
  'Go-http-client/2.0',
  'kube-probe/1.29',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'PostmanRuntime/7.37.3',
  'MyShopApp/5.14.2 (iOS 17.4.1; iPhone15,2)',
];
const uaDraw = zipf(UAS.length, 1.0);
const BUNDLES = ['c3e1a9f0', '7d21be04', '0f9a3c55']; // deploys in the window
const ROUTES = [ // [method weights, path builder, request body?, response bytes range]
  [[['GET', 1]], () => `/api/v1/products/${int(10000, 99999)}`, 0, [800, 6000]],
  [[['GET', 1]], () => '/api/v1/products', 0, [4000, 40000]],
  [[['GET', 1]], () => `/static/js/${pick(['app', 'vendor', 'runtime', 'checkout'])}.${pick(BUNDLES)}.js`, 0, [90000, 420000]],
  [[['GET', 1]], () => `/static/img/p/${int(10000, 99999)}/${pick(['thumb', 'large', 'hero'])}.webp`, 0, [6000, 250000]],
  [[['GET', 3], ['PATCH', 1]], () => `/api/v1/users/${USERS[userDraw()]}`, 1, [300, 2000]],
  [[['GET', 2], ['POST', 1]], () => `/api/v1/users/${USERS[userDraw()]}/orders`, 1, [200, 9000]],
  [[['GET', 2], ['DELETE', 1], ['PUT', 1]], () => `/api/v1/orders/${uuid()}`, 1, [200, 3000]],
  [[['POST', 1]], () => `/api/v1/orders/${uuid()}/items`, 1, [150, 900]],
  [[['POST', 1]], () => '/api/v1/cart/checkout', 1, [300, 1500]],
  [[['GET', 1]], () => '/api/v2/search', 0, [2000, 60000]],
  [[['POST', 1]], () => '/oauth/token', 1, [600, 1400]],
  [[['GET', 1]], () => '/healthz', 0, [2, 2]],
  [[['GET', 1]], () => '/metrics', 0, [12000, 16000]],
  [[['POST', 1]], () => `/api/v1/webhooks/stripe/${alnum(12)}`, 1, [2, 64]],
  [[['GET', 1]], () => `/api/v1/stores/${int(1, 480)}/inventory/${int(100000, 999999)}`, 0, [200, 1500]],
  [[['GET', 1]], () => `/de/p/${pick(['laufschuhe', 'regenjacke', 'rucksack', 'trinkflasche', 'stirnlampe'])}-${int(1000, 9999)}.html`, 0, [30000, 90000]],
].map(([m, path, body, resp]) => [weighted(m), path, body, resp]);
const routeDraw = zipf(ROUTES.length, 0.7);
const STATUS = weighted([[200, 780], [201, 30], [204, 30], [301, 10], [302, 20], [304, 40], [400, 20],
  [401, 15], [403, 10], [404, 30], [409, 3], [422, 5], [429, 5], [499, 2], [500, 7], [502, 3], [503, 5], [504, 2]]);
const TAGS = ['canary', 'mobile', 'bot', 'cached', 'slow', 'retry', 'internal', 'beta', 'gdpr', 'ab:b'];
const SEARCH = ['running shoes', 'rain jacket', 'backpack 30l', 'headlamp', 'merino socks', 'tent 2p', 'water bottle'];
const ACCEPT = ['application/json', '*/*', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'image/avif,image/webp,image/apng,*/*;q=0.8', 'application/json, text/plain, */*'];
const LANG = ['en-US,en;q=0.9', 'de-DE,de;q=0.9,en;q=0.8', 'fr-FR,fr;q=0.9', 'nl-NL,nl;q=0.9,en;q=0.6', 'ja-JP,ja;q=0.9'];
const REFERERS = ['https://www.google.com/', 'https://shop.example.com/', 'https://shop.example.com/cart',
  'https://www.bing.com/', 'https://t.co/', 'https://shop.example.com/de/p/laufschuhe-4471.html'];
const ERRORS = {
  4: [['ValidationError', 'field "quantity" must be between 1 and 99', 'E_VALIDATION'],
    ['NotFound', 'no such resource', 'E_NOT_FOUND'], ['Unauthorized', 'token expired', 'E_AUTH'],
    ['RateLimited', 'too many requests for client', 'E_RATE']],
  5: [['UpstreamTimeout', 'upstream inventory-svc timed out after 3000 ms', 'E_UPSTREAM'],
    ['DatabaseError', 'could not obtain connection from pool within 5000 ms', 'E_DB'],
    ['InternalError', 'unexpected nil pointer in handler', 'E_INTERNAL']],
};
const ipv4 = () => `${pick([81, 85, 91, 93, 176, 188, 203, 212, 217, 49, 100, 151])}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`;
const ipv6 = () => `2a02:${hex(4)}:${hex(3)}:${hex(4)}::${hex(4)}`.replace(/:0+(?=[0-9a-f])/g, ':');
const CLIENTS = Array.from({ length: 20000 }, () => (chance(0.12) ? ipv6() : ipv4()));
const clientDraw = zipf(CLIENTS.length, 0.8);

function access() {
  const r = ROUTES[routeDraw()];
  const method = r[0]();
  let path = r[1]();
  const status = STATUS();
  let query = '';
  if (path === '/api/v2/search')
    query = `q=${encodeURIComponent(pick(SEARCH))}&page=${int(1, 8)}&sort=${pick(['relevance', 'price_asc', 'newest'])}`;
  else if (path === '/api/v1/products')
    query = `category=${int(1, 60)}&limit=${pick([20, 50, 100])}&offset=${int(0, 20) * 20}`;
  else if (chance(0.08)) query = `utm_source=${pick(['newsletter', 'google', 'facebook'])}&utm_campaign=spring${int(1, 9)}`;
  const headers = {
    host: pick(['shop.example.com', 'api.example.com', 'api.example.com', 'static.example.com']),
    accept: pick(ACCEPT),
    'accept-encoding': pick(['gzip, deflate, br', 'gzip', 'br, gzip', 'identity']),
    'accept-language': pick(LANG),
  };
  const reqBytes = r[2] && method !== 'GET' && method !== 'DELETE' ? int(40, 4000) : 0;
  if (reqBytes) headers['content-type'] = pick(['application/json', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded']);
  if (chance(0.3)) headers['x-forwarded-proto'] = 'https';
  // Latency: log-normal around 25 ms, slower for errors and checkouts.
  let lat = Math.exp(Math.log(25) + 1.1 * normal());
  if (status >= 500) lat *= 8;
  if (path.endsWith('/checkout')) lat *= 4;
  if (path === '/healthz') lat = 0.2 + rand();
  const [lo, hi] = r[3];
  const respBytes = status === 304 || status === 204 ? 0 : status >= 400 ? int(60, 400) : int(lo, hi);
  const [country, cities] = GEO[geoDraw()];
  const tags = [];
  for (let n = weighted([[0, 40], [1, 30], [2, 18], [3, 8], [4, 4]])(); tags.length < n;) {
    const t = pick(TAGS);
    if (!tags.includes(t)) tags.push(t);
  }
  // Key order as a logging library would write it; optional keys only
  // when present (not null), as most shippers do.
  let s = `{"ts":"${stamp()}","host":"${pick(HOSTS)}",` +
    `"trace_id":"${hex(32)}","span_id":"${hex(16)}",`;
  s += `"request":{"method":"${method}","path":${JSON.stringify(path)},"query":${JSON.stringify(query)},` +
    `"proto":"${pick(['HTTP/1.1', 'HTTP/2.0', 'HTTP/2.0'])}","headers":${JSON.stringify(headers)},"bytes":${reqBytes}},`;
  s += `"response":{"status":${status},"bytes":${respBytes},"latency_ms":${lat.toFixed(3)}},`;
  s += `"client":{"ip":"${CLIENTS[clientDraw()]}","port":${int(1024, 65535)},"user_agent":${JSON.stringify(pick([UAS[uaDraw()], UAS[uaDraw()]]))},` +
    `"geo":{"country":"${country}","city":${JSON.stringify(pick(cities))}}},`;
  s += `"tags":${JSON.stringify(tags)}`;
  if (path.startsWith('/api/') && chance(0.55)) s += `,"user_id":"${USERS[userDraw()]}"`;
  if (chance(0.25)) s += `,"referer":${JSON.stringify(pick(REFERERS))}`;
  if (status >= 400 && status !== 404 && status !== 304) {
    const [type, message, code] = pick(ERRORS[Math.floor(status / 100)]);
    s += `,"error":{"type":"${type}","message":${JSON.stringify(message)},"code":"${code}"` +
      (status >= 500 ? `,"retryable":${chance(0.6)}` : '') + '}';
  }
  return s + '}\n';
}

// ---- application logs -------------------------------------------------------
const LEVEL = weighted([['DEBUG', 150], ['INFO', 690], ['WARN', 110], ['ERROR', 45], ['FATAL', 5]]);
const SERVICES = ['checkout-svc', 'inventory-svc', 'payment-gateway', 'user-svc', 'search-indexer', 'notification-worker', 'pricing-svc'];
const serviceDraw = zipf(SERVICES.length, 0.6);
const LOGGERS = ['com.example.checkout.CartService', 'com.example.inventory.StockRepository', 'payments.stripe.client',
  'users.handlers.profile', 'indexer.batch', 'notify.email.Sender', 'pricing.rules.Engine'];
const TEMPLATES = {
  DEBUG: [
    c => [`cache lookup key=product:${c.pid} hit=${chance(0.8)}`, { cache: { key: `product:${c.pid}`, ttl_s: pick([60, 300, 3600]) } }],
    c => [`sql query took ${c.ms} ms rows=${int(0, 500)}`, { db: { statement: pick(['SELECT', 'UPDATE', 'INSERT']), table: pick(['orders', 'stock', 'users', 'prices']), rows: int(0, 500) } }],
  ],
  INFO: [
    c => [`order ${c.order} placed by ${c.user} total=${c.amount} ${c.cur}`, { order: { id: c.order, items: int(1, 12), total: Number(c.amount), currency: c.cur } }],
    c => [`user ${c.user} logged in from ${CLIENTS[clientDraw()]}`, { auth: { method: pick(['password', 'oauth:google', 'sso:okta', 'passkey']), mfa: chance(0.4) } }],
    c => [`reindexed ${int(10, 5000)} documents in ${c.ms} ms`, null],
    c => [`sent ${pick(['order_confirmation', 'password_reset', 'shipping_update'])} email to ${c.user}`, { email: { provider: pick(['ses', 'sendgrid']), message_id: `<${hex(24)}@mail.example.com>` } }],
    c => [`price rule ${pick(['spring-sale', 'bulk-10', 'member-5'])} applied to product ${c.pid}`, { pricing: { before: Number(c.amount), after: Number((c.amount * 0.9).toFixed(2)) } }],
    c => [`request completed status=200 duration=${c.ms}ms`, { http: { method: 'GET', route: '/api/v1/products/:id', status: 200 } }],
  ],
  WARN: [
    c => [`stock low for product ${c.pid}: ${int(0, 5)} left in store ${int(1, 480)}`, { stock: { product_id: c.pid, threshold: 5 } }],
    c => [`retrying payment ${c.order} attempt ${int(2, 4)}/5 after ${int(100, 3200)} ms`, { payment: { provider: pick(['stripe', 'adyen', 'paypal']), attempt: int(2, 4) } }],
    c => [`slow query took ${c.ms * 20} ms`, { db: { table: pick(['orders', 'stock']), plan: 'Seq Scan' } }],
  ],
  ERROR: [
    c => [`payment ${c.order} declined: ${pick(['insufficient_funds', 'card_expired', 'do_not_honor'])}`, { payment: { provider: 'stripe', code: pick(['card_declined', 'expired_card']) } }],
    c => [`failed to publish event to kafka topic ${pick(['orders.v1', 'stock.v2'])}: ${pick(['NOT_LEADER_FOR_PARTITION', 'REQUEST_TIMED_OUT'])}`, { kafka: { partition: int(0, 23), offset: int(1e6, 9e8) } }],
  ],
  FATAL: [
    () => ['could not connect to database after 30 attempts, giving up', { db: { host: 'orders-db.internal', port: 5432 } }],
  ],
};
function stack() {
  const frames = [];
  for (let n = int(3, 8); frames.length < n;)
    frames.push(`\tat ${pick(LOGGERS)}.${pick(['handle', 'process', 'apply', 'call', 'run'])}(${pick(['CartService', 'Engine', 'Client', 'Worker'])}.java:${int(20, 900)})`);
  return `${pick(['java.net.SocketTimeoutException: Read timed out', 'java.lang.IllegalStateException: pool exhausted',
    'org.postgresql.util.PSQLException: connection refused'])}\n${frames.join('\n')}`;
}
function app() {
  const level = LEVEL();
  const svc = serviceDraw();
  const c = {
    user: USERS[userDraw()], order: uuid(), pid: int(10000, 99999), ms: int(1, 900),
    amount: (Math.exp(3.5 + 0.9 * normal())).toFixed(2), cur: pick(['EUR', 'EUR', 'USD', 'GBP', 'PLN']),
  };
  const [msg, ctx] = pick(TEMPLATES[level])(c);
  let s = `{"ts":"${stamp()}","level":"${level}","service":"${SERVICES[svc]}","version":"${pick(['1.42.0', '1.42.1', '1.43.0-rc.1'])}",` +
    `"host":"${pick(HOSTS)}","pid":${1000 + svc * 17},"thread":"${pick(['main', 'worker-1', 'worker-2', 'worker-3', 'http-nio-8080-exec-4', 'kafka-consumer-0'])}",` +
    `"logger":"${LOGGERS[svc]}","msg":${JSON.stringify(msg)},"trace_id":"${hex(32)}","span_id":"${hex(16)}"`;
  if (ctx) s += `,"context":${JSON.stringify(ctx)}`;
  if (chance(0.5)) s += `,"user_id":"${c.user}"`;
  if ((level === 'ERROR' || level === 'FATAL') && chance(0.7)) s += `,"exception":${JSON.stringify(stack())}`;
  return s + '}\n';
}

// ---- write ----------------------------------------------------------------------
const gen = args.kind === 'access' ? access : args.kind === 'app' ? app : () => (chance(2 / 3) ? access() : app());
const fd = out === '-' ? 1 : fs.openSync(out, 'w');
let written = 0, lines = 0;
while (written < target) {
  let chunk = '';
  for (let i = 0; i < 2000 && written + chunk.length < target; i++, lines++) chunk += gen();
  const buf = Buffer.from(chunk);
  fs.writeSync(fd, buf);
  written += buf.length;
}
if (fd !== 1) fs.closeSync(fd);
console.error(`${out}: ${args.kind}, seed ${args.seed}: ${(written / 1048576).toFixed(1)} MiB, ${lines} lines, ` +
  `${Math.round(written / lines)} bytes a line`);
