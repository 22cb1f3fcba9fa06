// footer.mjs - checks that a file is what its name says it tests: the
// expectation's optional "footer" object is compared with the file's footer
// as parsed by hyparquet (a Thrift parser independent of parqd):
//
//   "footer": {
//     "num_rows": 5000,                  FileMetaData.num_rows
//     "row_groups": 5,                   number of row groups
//     "codec": "BROTLI",                 every column chunk's codec
//     "page_type": "DATA_PAGE_V2",       every data page (from encoding_stats)
//     "encodings": {"a.list.element": "DELTA_BYTE_ARRAY"},
//                                        every data page of every chunk of that leaf
//     "dictionary_mixed": ["s"]          leaf has chunks with and without a dictionary
//     "dictionary_fallback_in_chunk": ["s"]
//                                        a chunk of the leaf has data pages with
//                                        dictionary indices, then pages without
//   }
//
// Data page encodings come from encoding_stats when the writer wrote them,
// else from ColumnMetaData.encodings (then only "is listed" is checked).
import fs from 'node:fs';
import { parquetMetadata } from 'hyparquet';

const DATA_PAGES = new Set(['DATA_PAGE', 'DATA_PAGE_V2']);
const DICT_ENCODINGS = new Set(['RLE_DICTIONARY', 'PLAIN_DICTIONARY']);

function chunkInfo(m) {
  if (m.encoding_stats && m.encoding_stats.length) {
    const data = m.encoding_stats.filter(s => DATA_PAGES.has(s.page_type));
    return {
      exact: true,
      encodings: new Set(data.map(s => s.encoding)),
      pageTypes: new Set(data.map(s => s.page_type)),
    };
  }
  return { exact: false, encodings: new Set(m.encodings || []), pageTypes: null };
}

/* Returns {status, msg}; status NONE when the expectation has no footer spec. */
export function checkFooter(file, footerSpec) {
  if (!footerSpec) return { status: 'NONE', msg: '' };
  let md;
  try {
    const b = fs.readFileSync(file);
    md = parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  } catch (e) {
    return { status: 'FAIL', msg: `footer not parsed: ${String(e.message).split('\n')[0]}` };
  }
  const f = footerSpec;
  const problems = [];
  if (f.num_rows !== undefined && BigInt(md.num_rows) !== BigInt(f.num_rows))
    problems.push(`num_rows ${md.num_rows}, expected ${f.num_rows}`);
  if (f.row_groups !== undefined && md.row_groups.length !== f.row_groups)
    problems.push(`${md.row_groups.length} row groups, expected ${f.row_groups}`);
  const byPath = new Map();
  md.row_groups.forEach((rg, i) => {
    for (const c of rg.columns) {
      const m = c.meta_data;
      if (!m) continue;
      const p = m.path_in_schema.join('.');
      if (!byPath.has(p)) byPath.set(p, []);
      byPath.get(p).push({ rg: i, m, ...chunkInfo(m) });
      if (f.codec && m.codec !== f.codec) problems.push(`row group ${i} ${p}: codec ${m.codec}, expected ${f.codec}`);
    }
  });
  let inexact = false;
  if (f.page_type) {
    for (const [p, chunks] of byPath) {
      for (const c of chunks) {
        if (!c.pageTypes) { inexact = true; continue; }
        for (const t of c.pageTypes) if (t !== f.page_type) problems.push(`row group ${c.rg} ${p}: ${t} pages, expected ${f.page_type}`);
      }
    }
  }
  for (const [p, enc] of Object.entries(f.encodings || {})) {
    const chunks = byPath.get(p);
    if (!chunks) { problems.push(`no column chunk for ${p}`); continue; }
    for (const c of chunks) {
      if (c.exact) {
        if (c.encodings.size !== 1 || !c.encodings.has(enc))
          problems.push(`row group ${c.rg} ${p}: data pages ${[...c.encodings].join('+') || '(none)'}, expected ${enc}`);
      } else {
        inexact = true;
        if (!c.encodings.has(enc)) problems.push(`row group ${c.rg} ${p}: encodings ${[...c.encodings].join('+')}, expected ${enc}`);
      }
    }
  }
  for (const p of f.dictionary_mixed || []) {
    const chunks = byPath.get(p);
    if (!chunks) { problems.push(`no column chunk for ${p}`); continue; }
    const withDict = chunks.filter(c => [...c.encodings].some(e => DICT_ENCODINGS.has(e))).length;
    if (withDict === 0 || withDict === chunks.length)
      problems.push(`${p}: ${withDict} of ${chunks.length} chunks dictionary-encoded, expected some but not all`);
  }
  for (const p of f.dictionary_fallback_in_chunk || []) {
    const chunks = byPath.get(p);
    if (!chunks) { problems.push(`no column chunk for ${p}`); continue; }
    const both = chunks.filter(c => c.exact && [...c.encodings].some(e => DICT_ENCODINGS.has(e)) &&
                                     [...c.encodings].some(e => !DICT_ENCODINGS.has(e))).length;
    if (both === 0)
      problems.push(`${p}: no chunk has data pages both with and without the dictionary`);
  }
  if (problems.length) return { status: 'FAIL', msg: problems.slice(0, 3).join('; ') + (problems.length > 3 ? `; ${problems.length - 3} more` : '') };
  return { status: 'PASS', msg: inexact ? 'no encoding_stats: encodings checked as listed only' : '' };
}
