// numrule.mjs - parqd's rule for the Variant type of a JSON number
// (schema/variant/vnumber.c, README "Numbers in Variant columns"), restated here
// independently of the C code so the interop tests can check that every
// number read back has the type the rule gives it and the text's value:
//   int    integer syntax that fits int64 (narrowest of INT8..INT64)
//   dec    integer syntax beyond int64 with <= 38 digits (scale 0); or a
//          fraction/exponent whose digits no double keeps, with an integer
//          digit (scale < precision) and <= 38 digits
//   double a fraction/exponent whose double prints back (shortest form,
//          JavaScript's Number#toString: fewest digits, then nearest) as
//          the text's value; zero with a fraction or exponent
//   lossy  nothing exact that readers accept: the correctly rounded double
//          (|x| < 1 with more digits than a double keeps, > 38 digits)
// Exact values are BigInt (unscaled, scale >= 0, no trailing zero).
import { JNum, normDec } from './logs_json.mjs';

const I64 = [-(2n ** 63n), 2n ** 63n - 1n];
const INT_TYPES = [['INT8', 7n], ['INT16', 15n], ['INT32', 31n], ['INT64', 63n]];

function digits(u) {
  return (u < 0n ? -u : u).toString().length;
}

/* Exact value of a JS double's shortest form, or null for non-finite. */
export function shortestDec(x) {
  if (!Number.isFinite(x)) return null;
  const j = new JNum(String(x));
  return [j.u, j.s];
}

/* The rule for one JSON number text; cached on the JNum. Returns
 * {kind, u, s, intType?, double?, why} with u/s the text's exact value. */
export function ruleOf(num) {
  const j = num instanceof JNum ? num : new JNum(String(num));
  if (j._rule) return j._rule;
  const text = j.text;
  const intSyntax = j.isIntLiteral;
  const r = { kind: null, u: j.u, s: j.s, text };
  const x = Number(text);
  r.double = x;
  const dblExact = () => {
    const d = shortestDec(x);
    return d !== null && d[0] === j.u && d[1] === j.s;
  };
  if (intSyntax) {
    if (j.u >= I64[0] && j.u <= I64[1]) {
      r.kind = 'int';
      r.intType = INT_TYPES.find(([, b]) => j.u >= -(2n ** b) && j.u < 2n ** b)[0];
    } else if (digits(j.u) <= 38) {
      r.kind = 'dec';
    } else {
      r.kind = dblExact() ? 'double' : 'lossy';
    }
  } else if (j.u === 0n) {
    r.kind = 'double';
  } else if (!Number.isFinite(x)) {
    r.kind = 'refused';
  } else if (dblExact()) {
    r.kind = 'double';
  } else if (digits(j.u) <= 38 && (j.s === 0 || digits(j.u) > j.s)) {
    r.kind = 'dec';
  } else {
    r.kind = 'lossy';
  }
  j._rule = r;
  return r;
}

/* Does a value read back (kind int/dec with BigInt a and scale, or
 * double/float with number a) hold what the rule stores for the source
 * number? `exactShred`: the path is shredded as intN/decimal, where a
 * double is stored by its (exact) shortest form. Returns null or why not. */
export function checkNumber(num, got, exactShred = false) {
  const r = ruleOf(num);
  if (got.kind === 'int' || got.kind === 'dec') {
    const [u, s] = normDec(got.a, got.scale || 0);
    if (Object.is(r.double, -0) && r.kind !== 'int' && r.kind !== 'dec')
      return 'the double -0.0 in an exact type, which drops its sign';
    if (r.kind === 'lossy' && exactShred) {
      // the rule stored the nearest double; shredded by its shortest form
      const d = shortestDec(r.double);
      return d && d[0] === u && d[1] === s ? null : 'not the shortest form of the nearest double';
    }
    if (u !== r.u || s !== r.s) return 'value differs';
    if (r.kind === 'int' || r.kind === 'dec') return null;
    if (r.kind === 'double' && exactShred) return null;
    return `an exact ${got.kind} where the rule stores a double`;
  }
  if (got.kind === 'double') {
    if (!Object.is(got.a, r.double)) return `not the double of the text (${Object.is(r.double, -0) ? '-0' : r.double})`;
    if (r.kind === 'double') {
      const d = shortestDec(got.a);
      return d && d[0] === r.u && d[1] === r.s ? null : 'shortest form differs from the text';
    }
    if (r.kind === 'lossy') return null;
    return `a double where the rule stores ${r.kind === 'int' ? 'an integer' : 'a decimal'}`;
  }
  return `a ${got.kind} (the rule never stores one)`;
}

export { normDec };
