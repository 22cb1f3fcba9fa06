// isolate.mjs - runs a reader's checks in child processes, so a reader that
// crashes or hangs on one input fails that input instead of the run.
//
// runIsolated(items, argsFor, key, timeoutSec): starts `node argsFor(pending)`;
// the child prints one JSON line per item: {start: item} before it, then
// {[key]: item, status, msg} after it. A child that dies or stays silent
// for timeoutSec fails the item it was on (or the first pending one) with
// the tail of its stderr, and a new child takes the rest. Resolves to a
// Map item -> {status, msg}.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

export function runIsolated(items, argsFor, key, timeoutSec) {
  const results = new Map();
  return new Promise((resolve) => {
    const start = (pending) => {
      if (pending.length === 0) return resolve(results);
      const child = spawn(process.execPath, argsFor(pending), { stdio: ['ignore', 'pipe', 'pipe'] });
      let current = null, stderr = '', timer = null, timedOut = false;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutSec * 1000);
      };
      arm();
      child.stderr.on('data', d => { stderr = (stderr + d).slice(-2000); });
      readline.createInterface({ input: child.stdout }).on('line', line => {
        let o;
        try { o = JSON.parse(line); } catch { return; }
        arm();
        if (o.start) current = o.start;
        else if (o[key]) { results.set(o[key], { status: o.status, msg: o.msg }); current = null; }
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        const rest = pending.filter(n => !results.has(n));
        if (rest.length === 0) return resolve(results);
        const victim = current || rest[0];
        const why = timedOut ? `no result within ${timeoutSec} s (killed)`
          : `reader process died (${signal || 'exit ' + code})`;
        const tail = stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ');
        results.set(victim, { status: 'FAIL', msg: `${why}${tail ? ': ' + tail : ''}` });
        start(rest.filter(n => n !== victim));
      });
    };
    start(items);
  });
}
