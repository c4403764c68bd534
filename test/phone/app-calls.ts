/**
 * The original phone app's HTTP calls and model reads, derived from its Dart source
 * (../shared/clients/bottlecrm-mobile) rather than listed by hand, so a new screen's calls and a
 * model's new cast are picked up by the contract test (contract.test.ts):
 * - `lib/config/api_config.dart` names every endpoint (a getter or a function of ids);
 * - every `_api.get|getList|post|put|patch|delete|postMultipart(…)` in `lib/` is one call, its URL
 *   an ApiConfig endpoint, possibly through a local `url` variable and with `$id/…` appended; and
 *   the attachment helper's uploads (`urlFor`) and downloads;
 * - every model's `fromJson` casts `json['key'] as Type` (a non-nullable cast on a missing key, or a
 *   value of another type, throws in the app).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { REPO } from '../helpers/repo.ts'

export const APP_ROOT = resolve(REPO, '../shared/clients/bottlecrm-mobile')

const dartFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? dartFiles(path) : name.endsWith('.dart') ? [path] : []
  })

/** `{id}` for every Dart interpolation (`$id`, `${x.y}`), the query string dropped. */
const templateOf = (text: string) =>
  text
    .replace(/\?.*$/, '')
    .replace(/\$\{[^}]*\}|\$[A-Za-z_]\w*/g, '{id}')

/** ApiConfig's endpoints by name: `leads` → `/api/leads/`, `ticketWatch` → `/api/cases/{id}/watch/`. */
export function endpoints(): Map<string, string> {
  const source = readFileSync(join(APP_ROOT, 'lib/config/api_config.dart'), 'utf8')
  const found = new Map<string, string>()
  for (const match of source.matchAll(/static String (?:get )?(\w+)(?:\([^)]*\))?\s*=>\s*'\$apiBaseUrl([^']*)'/g)) {
    found.set(match[1]!, `/api${templateOf(match[2]!)}`)
  }
  return found
}

export type AppCall = { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string; source: string }

const METHODS = { get: 'GET', getList: 'GET', getBytes: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE', postMultipart: 'POST' } as const

/** The path an URL expression names: its ApiConfig endpoint, then the literal path after it (`'${ApiConfig.leads}$id/'`). */
function pathOf(expression: string, known: Map<string, string>): string | undefined {
  const match = /ApiConfig\.(\w+)(?:\([^)]*\)?)?(?:\}([^'"]*))?/.exec(expression)
  const base = match && known.get(match[1]!)
  if (!base) return undefined
  const rest = templateOf(match[2] ?? '')
  return (base + rest).replace(/\/\{id\}\{id\}/g, '/{id}').replace(/\/\//g, '/')
}

/** Every call the app's code makes, with the file it is in (one per call site). */
export function appCalls(): AppCall[] {
  const known = endpoints()
  const calls: AppCall[] = []
  for (const file of dartFiles(join(APP_ROOT, 'lib'))) {
    const source = readFileSync(file, 'utf8')
    // Its uploads (attachment_upload.dart: a multipart POST to each record kind's `urlFor`) and downloads.
    for (const upload of source.matchAll(/return '(\$\{ApiConfig\.\w+\}[^']*)';/g)) {
      if (/String urlFor\(/.test(source)) calls.push({ method: 'POST', path: pathOf(upload[1]!, known)!, source: relative(APP_ROOT, file) })
    }
    for (const download of source.matchAll(/downloadAttachment\(\s*url:\s*(ApiConfig\.\w+)/g)) calls.push({ method: 'GET', path: pathOf(download[1]!, known)!, source: relative(APP_ROOT, file) })
    for (const call of source.matchAll(/(?:_api(?:Service)?|ApiService\(\)\)?)\.(getList|getBytes|get|postMultipart|post|put|patch|delete)\(\s*([^,;]*?)\s*[,)]/g)) {
      let argument = call[2]!
      const method = call[1] === 'postMultipart' ? /method:\s*'(\w+)'/.exec(source.slice(call.index, call.index + 600))?.[1] ?? 'POST' : METHODS[call[1] as keyof typeof METHODS]
      if (!argument.includes('ApiConfig.')) {
        // A local variable (`url`, `base`): its nearest assignment before the call.
        const name = /^\w+$/.exec(argument)?.[0] ?? 'url'
        const before = source.slice(0, call.index)
        const assignment = [...before.matchAll(new RegExp(`\\b(?:final|var|String)\\s+${name}\\s*=([\\s\\S]*?);`, 'g'))].at(-1)
        argument = assignment?.[1] ?? argument
      }
      const path = pathOf(argument, known)
      if (path) calls.push({ method: method as AppCall['method'], path, source: relative(APP_ROOT, file) })
    }
  }
  return calls
}

/** The distinct method + path pairs of {@link appCalls}. */
export function distinctCalls(): AppCall[] {
  const byKey = new Map<string, AppCall>()
  for (const call of appCalls()) if (!byKey.has(`${call.method} ${call.path}`)) byKey.set(`${call.method} ${call.path}`, call)
  return [...byKey.values()]
}

/** `typeChecked`: the model tests the value's type before this cast (`json['k'] is num ? … as num`), so another type takes another branch. */
export type DartCast = { key: string; type: string; nullable: boolean; typeChecked: boolean }

/**
 * The top-level `json['key'] as Type` casts of each model's `fromJson`, by class. A cast is
 * nullable when it says `?` or the same `fromJson` first tests the key (`json['k'] != null ?`,
 * `json['k'] is …`), which is how the models guard their non-nullable casts.
 */
export function modelCasts(): Map<string, DartCast[]> {
  const models = new Map<string, DartCast[]>()
  for (const file of dartFiles(join(APP_ROOT, 'lib/data/models'))) {
    const source = readFileSync(file, 'utf8')
    for (const factory of source.matchAll(/factory (\w+)\.fromJson\([^)]*\)\s*(?:=>|\{)/g)) {
      const body = bodyFrom(source, factory.index + factory[0].length - 1)
      const casts: DartCast[] = []
      for (const cast of body.matchAll(/json\['(\w+)'\]\s+as\s+([A-Za-z]+(?:<[^>]*>)?)(\?)?/g)) {
        const key = cast[1]!
        const type = cast[2]!.replace(/<.*$/, '')
        const guarded = new RegExp(`json\\['${key}'\\]\\s*(?:!=\\s*null|is\\s)`).test(body)
        const typeChecked = new RegExp(`json\\['${key}'\\]\\s+is\\s+${type}\\b`).test(body)
        casts.push({ key, type, nullable: cast[3] === '?' || guarded, typeChecked })
      }
      models.set(factory[1]!, casts)
    }
  }
  return models
}

/** The text of a brace block (or an arrow body up to its `;`) starting at `from`. */
function bodyFrom(source: string, from: number): string {
  if (source[from] !== '{') return source.slice(from, source.indexOf(';\n', from))
  let depth = 0
  for (let i = from; i < source.length; i++) {
    if (source[i] === '{') depth++
    else if (source[i] === '}' && --depth === 0) return source.slice(from, i + 1)
  }
  return source.slice(from)
}

/** What a Dart cast accepts of a JSON value. */
const ACCEPTS: Record<string, (value: unknown) => boolean> = {
  String: (v) => typeof v === 'string',
  num: (v) => typeof v === 'number',
  int: (v) => Number.isInteger(v),
  double: (v) => typeof v === 'number',
  bool: (v) => typeof v === 'boolean',
  Map: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  List: (v) => Array.isArray(v),
}

/** Why `fromJson` of `model` would throw on `json`, or nothing: a missing non-nullable key, or a value its cast refuses. */
export function castFailures(casts: readonly DartCast[], json: unknown, where = ''): string[] {
  if (typeof json !== 'object' || json === null) return [`${where || 'the body'} is not an object`]
  const record = json as Record<string, unknown>
  return casts.flatMap(({ key, type, nullable, typeChecked }) => {
    const value = record[key]
    const accepts = ACCEPTS[type]
    if (value === undefined || value === null) return nullable ? [] : [`${where}${key}: missing (cast \`as ${type}\`)`]
    return accepts && !typeChecked && !accepts(value) ? [`${where}${key}: ${JSON.stringify(value)?.slice(0, 40)} is not a Dart ${type}`] : []
  })
}
