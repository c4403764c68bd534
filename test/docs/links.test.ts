/**
 * Every relative link in README.md and docs/*.md resolves: to a file or folder of the repository
 * and, with a `#fragment`, to a heading of that Markdown file (GitHub's anchor spelling). Links
 * to pages elsewhere (`https:`, `mailto:`) are not followed. And the README stays short.
 */
import { existsSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import t from 'tap'
import { REPO, anchorsOf, docFiles, linksOf, readDoc } from './markdown.ts'

t.test('relative links in the README and docs resolve', async (t) => {
  const files = docFiles()
  let checked = 0
  for (const file of files) {
    for (const { line, target } of linksOf(readDoc(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // another site
      const [path = '', fragment] = target.split('#', 2)
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
      const where = `${file}:${line} → ${target}`
      checked++
      if (relative(REPO, join(REPO, resolved)).startsWith('..')) {
        t.fail(`${where}: points outside the repository (write such paths as code, not links)`)
        continue
      }
      if (!existsSync(join(REPO, resolved))) {
        t.fail(`${where}: ${resolved} does not exist`)
        continue
      }
      if (fragment !== undefined) {
        if (!resolved.endsWith('.md')) {
          t.fail(`${where}: an anchor into a file that is not Markdown`)
          continue
        }
        const anchors = anchorsOf(readDoc(resolved))
        t.ok(anchors.has(fragment), `${where}: #${fragment} is a heading of ${resolved}`, { found: [...anchors] })
      } else {
        t.pass(where)
      }
    }
  }
  t.ok(checked > 0, `${checked} relative links checked in ${files.length} documents`)
})

t.test('the README stays a short entry page with the two set-up commands', async (t) => {
  const readme = readDoc('README.md')
  const lines = readme.trimEnd().split('\n').length
  t.ok(lines < 150, `README.md has ${lines} lines (fewer than 150: the rest belongs in docs/)`)
  for (const command of ['npm ci && npm start', 'npm ci && npm test']) t.ok(readme.includes(command), `README.md says \`${command}\``)
})

t.test('GitHub anchors', async (t) => {
  t.same(
    [...anchorsOf('# Leads, accounts, contacts, custom fields, goals\n## HTML pages and body encodings\n## `src/` layout\n## Tests\n## Tests\n```\n# not a heading\n```')],
    ['leads-accounts-contacts-custom-fields-goals', 'html-pages-and-body-encodings', 'src-layout', 'tests', 'tests-1'],
  )
})
