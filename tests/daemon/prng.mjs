// prng.mjs - the seeded PRNG of the daemon test clients (mulberry32): the
// same seed gives the same splits, delays and payloads, so a failing run is
// repeated by passing the seed it printed.

export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)); // inclusive
  next.bytes = n => {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
    return b;
  };
  return next;
}

export function seedFrom(arg) {
  if (arg !== undefined && arg !== '') return Number(arg) >>> 0;
  return (Date.now() ^ (process.pid << 16)) >>> 0;
}

/* "tcp:127.0.0.1:5170", "tcp:[::1]:5170", "unix:/path" -> net.connect options */
export function parseTarget(t) {
  if (t.startsWith('unix:')) return { path: t.slice(5), kind: 'unix' };
  let m = /^tls:([^:]+):(\d+)$/.exec(t);
  if (m) return { host: m[1], port: Number(m[2]), kind: 'tls', tls: true };
  m = /^tcp:\[([^\]]+)\]:(\d+)$/.exec(t);
  if (m) return { host: m[1], port: Number(m[2]), kind: 'tcp6' };
  m = /^tcp:([^:]+):(\d+)$/.exec(t);
  if (m) return { host: m[1], port: Number(m[2]), kind: 'tcp4' };
  throw new Error(`bad target ${t} (tcp:HOST:PORT, tcp:[V6]:PORT, tls:HOST:PORT or unix:PATH)`);
}

/* --name value options and positional arguments. */
export function parseArgs(argv, defaults = {}) {
  const opts = { ...defaults, _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const k = a.slice(2);
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) opts[k] = true;
      else { opts[k] = v; i++; }
    } else {
      opts._.push(a);
    }
  }
  return opts;
}

export const sleep = ms => new Promise(r => setTimeout(r, ms));
