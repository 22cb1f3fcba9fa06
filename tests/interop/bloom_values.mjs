// bloom_values.mjs - the present and absent values of bloom_gen.c's files,
// regenerated from its derivation (splitmix64 finalizer over seed ^ 2i for
// present values, seed ^ (2i + 1) for absent ones).
const M64 = (1n << 64n) - 1n;
function mix(x) {
  x ^= x >> 30n;
  x = (x * 0xbf58476d1ce4e5b9n) & M64;
  x ^= x >> 27n;
  x = (x * 0x94d049bb133111ebn) & M64;
  return x ^ (x >> 31n);
}
const SUFFIX = 'abcdefghijkl';

export function bloomValues(manifest) {
  const seedInt = BigInt(manifest.seed_int), seedStr = BigInt(manifest.seed_str);
  const intValue = (i, absent) => BigInt.asIntN(64, mix(seedInt ^ (2n * BigInt(i) + (absent ? 1n : 0n))));
  const strValue = (i, absent) =>
    mix(seedStr ^ (2n * BigInt(i) + (absent ? 1n : 0n))).toString(16).padStart(16, '0') + '-' + SUFFIX.slice(0, i % 13);
  const valueOf = (col, i, absent) => (col === 's' ? strValue(i, absent) : intValue(i, absent));
  return { intValue, strValue, valueOf };
}
