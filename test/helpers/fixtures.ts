import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildTestApp } from './app.ts'
import { givenOrganization } from './identity.ts'

export type Headers = Record<string, string>
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The usual cast of a module's HTTP tests: Acme (admin, Alice, Bob) and Globex, the other tenant. */
export async function givenTwoOrganizations(t: Test, options: Parameters<typeof buildTestApp>[1] = {}) {
  const built = await buildTestApp(t, options)
  const acme = await givenOrganization(built.app, built.database.db, 'Acme')
  const globex = await givenOrganization(built.app, built.database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  return { ...built, acme, globex, alice, bob }
}

/** A request that must succeed (a failing assertion naming the answer otherwise); answers its JSON body, or null when empty. */
export function succeeding(t: Test, app: FastifyInstance) {
  return async (method: Method, url: string, headers: Headers, payload?: object) => {
    const res = await app.inject({ method, url, headers, payload })
    t.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`)
    return res.body ? res.json() : null
  }
}

/**
 * `call`: a request as `headers` (by default `defaults`); `ok`: one that must answer 2xx, or it
 * throws naming the answer, with its JSON body ({} for a 204).
 */
export function jsonClient(app: FastifyInstance, defaults: Headers) {
  const call = (method: Method, url: string, headers: Headers = defaults, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const ok = async (method: Method, url: string, headers: Headers = defaults, payload?: object): Promise<Record<string, any>> => {
    const res = await call(method, url, headers, payload)
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.statusCode === 204 ? {} : res.json()
  }
  return { call, ok }
}

/** Shorthands for one collection route, e.g. `/api/accounts/`. */
export function collectionClient(app: FastifyInstance, base: string) {
  const inject = (method: Method, url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, payload })
  return {
    inject,
    create: (headers: Headers, payload: object) => inject('POST', base, headers, payload),
    detail: async (headers: Headers, id: string) => (await inject('GET', `${base}${id}/`, headers)).json(),
    list: async (headers: Headers, query = '') => (await inject('GET', `${base}${query}`, headers)).json(),
  }
}
