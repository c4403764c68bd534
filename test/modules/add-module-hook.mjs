// A module loader hook for test/modules/new-module.test.ts: src/modules/modules.ts loads with the
// example module added to its list, exactly the one line a new module's diff adds there.
let example
export function initialize(data) {
  example = data.example
}
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context)
  // The list as tsx loads it, or compiled (test/run.ts runs the suite from .data/js).
  if (!/\/src\/modules\/modules\.[jt]s$/.test(url)) return loaded
  const source = String(loaded.source)
  const listed = source.replace(/(const LISTED\b[^=]*=\s*\[)/, '$1exampleModule, ')
  if (listed === source) throw new Error('add-module-hook: the module list was not found in src/modules/modules.ts')
  return { ...loaded, source: `import { exampleModule } from ${JSON.stringify(example)};\n${listed}` }
}
