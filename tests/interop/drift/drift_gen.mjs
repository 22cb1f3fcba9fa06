// drift_gen.mjs - the type-drift stream of test_auto_shred_drift.sh: the
// first STABLE lines (the first row group) have one type per field, so
// `shred: auto` shreds them; the lines after drift every way a log stream
// does: int -> string, int widening past the chosen width, int -> double
// and double -> int, object -> scalar / null / empty, a field that
// vanishes, a new field, array element types mixed, nested fields
// changing type, a key named "value" (never shredded: hyparquet 1.31.5
// reads such a field as null), a vanished object. Stable lines keep coming between drifted
// ones, so every row group after the first mixes both. Deterministic.
//   node drift_gen.mjs STABLE TOTAL > drift.ndjson
const stable = Number(process.argv[2] || 200), total = Number(process.argv[3] || 1000);
const out = [];
const base = (i) => ({
  level: ['info', 'warn', 'error'][i % 3], status: 200 + (i % 5), n: i % 100,
  obj: { a: i % 7, b: `x${i % 11}`, deep: { c: i % 2 === 0, d: [i, i + 1] } },
  arr: [i % 3, (i * 7) % 5], gone: `here ${i}`, lat: 1.5 + (i % 10) / 4, flag: i % 2 === 0,
  small: i % 50, ts: `2024-05-14T06:59:${String(i % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z`,
  value: i, 'dotted.key': `d${i % 4}`, Small: i % 7,     // "Small" beside "small": readers fold case
});
const drifts = [
  (r, i) => { r.status = String(r.status); },                  // int -> string
  (r, i) => { r.small = 9223372036854775807n; },               // past int8
  (r, i) => { r.small = -129; },                               // past int8, negative
  (r, i) => { r.n = 1.25; },                                   // int -> double
  (r, i) => { r.lat = 3; },                                    // double -> int
  (r, i) => { r.lat = '2.5'; },                                // double -> string
  (r, i) => { r.obj = 'scalar now'; },                         // object -> scalar
  (r, i) => { r.obj = null; },                                 // object -> null
  (r, i) => { r.obj = {}; },                                   // object -> empty
  (r, i) => { r.obj.a = 'seven'; r.obj.extra = [1, 'two']; },  // nested drift + new nested field
  (r, i) => { r.obj.deep = [1, 2, 3]; },                       // nested object -> array
  (r, i) => { delete r.gone; },                                // vanished field
  (r, i) => { r.newfield = { x: i, y: [true, null] }; },       // new field
  (r, i) => { r.arr = ['a', 1, { k: null }, [], 2.5]; },       // mixed elements
  (r, i) => { r.arr = 'not an array'; },                       // array -> scalar
  (r, i) => { r.flag = 'yes'; },                               // bool -> string
  (r, i) => { r.level = null; },                               // string -> null
  (r, i) => { r.ts = 1715669999968; },                         // string -> int
  (r, i) => { r.value = { nested: 'value' }; },                // the unshreddable key
  (r, i) => { r.n = 12345678901234567.8; r.lat = 0.1 + 0.2; }, // digits
  (r, i) => { delete r.obj; },                                 // vanished object
  (r, i) => { r.empty = i % 2 ? [] : {}; },                    // empty containers
];
/* drifted lines are those with i % 3 != 0: a count of drifts that is not a
 * multiple of 3 lets every drift be a line's first */
for (let i = 0; i < total; i++) {
  const r = base(i);
  if (i >= stable && i % 3 !== 0) {
    drifts[i % drifts.length](r, i);
    if (i % 7 === 0) drifts[(i * 3) % drifts.length](r, i);
  }
  let line = JSON.stringify(r, (k, v) => typeof v === 'bigint' ? `@@${v}@@` : v);
  line = line.replace(/"@@(-?[0-9]+)@@"/g, '$1');
  if (i >= stable && i % 20 === 19) line = line.replace('"n":1.25', '"n":12345678901234567.8');
  out.push(line);
}
process.stdout.write(out.join('\n') + '\n');
