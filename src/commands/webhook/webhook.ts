import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A webhook subscription (issue 8): where the organization's events are POSTed and which ones.
 * The signing secret is not in these events (see migrations/…-webhooks.ts). `activation` is the
 * stream revision of the event that last made the subscription active: the delivery worker counts
 * a failure streak per activation, so an automatic disable never hits a subscription re-enabled since.
 */

// Events: the storage contract.
export type WebhookEvent =
  | { type: 'WebhookCreated'; data: { webhook_id: string; org_id: string; url: string; event_types: string[]; created_by: string | null; at: string } }
  | { type: 'WebhookChanged'; data: { url?: string; event_types?: string[]; is_active?: boolean; at: string } }
  | { type: 'WebhookDisabled'; data: { reason: string; failures: number; at: string } }
  | { type: 'WebhookDeleted'; data: { at: string } }

export const WEBHOOK_EVENT_TYPES = ['WebhookCreated', 'WebhookChanged', 'WebhookDisabled', 'WebhookDeleted'] as const

// Fold.
export type WebhookState = { exists: boolean; deleted: boolean; orgId: string | null; url: string; eventTypes: string[]; isActive: boolean; activation: number; revision: number }

export const initialWebhookState = (): WebhookState => ({ exists: false, deleted: false, orgId: null, url: '', eventTypes: [], isActive: false, activation: -1, revision: -1 })

export function evolveWebhook(previous: WebhookState, event: WebhookEvent): WebhookState {
  const state = { ...previous, revision: previous.revision + 1 }
  switch (event.type) {
    case 'WebhookCreated':
      return { ...state, exists: true, orgId: event.data.org_id, url: event.data.url, eventTypes: event.data.event_types, isActive: true, activation: state.revision }
    case 'WebhookChanged': {
      const enabled = event.data.is_active === true && !state.isActive
      return {
        ...state,
        url: event.data.url ?? state.url,
        eventTypes: event.data.event_types ?? state.eventTypes,
        isActive: event.data.is_active ?? state.isActive,
        activation: enabled ? state.revision : state.activation,
      }
    }
    case 'WebhookDisabled':
      return { ...state, isActive: false }
    case 'WebhookDeleted':
      return { ...state, deleted: true, isActive: false }
  }
}

// Decisions. Time, ids and the caller arrive in the command; another org's webhook looks missing.
export type WebhookCommand =
  | { type: 'CreateWebhook'; webhookId: string; orgId: string; url: string; eventTypes: string[]; actorId: string | null; at: string }
  | { type: 'ChangeWebhook'; orgId: string; url?: string; eventTypes?: string[]; isActive?: boolean; at: string }
  /** From the delivery worker: only while still active under the activation whose failures it counted. */
  | { type: 'DisableWebhook'; orgId: string; activation: number; reason: string; failures: number; at: string }
  | { type: 'DeleteWebhook'; orgId: string; at: string }

function existing(state: WebhookState, orgId: string): void {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw new NotFoundError()
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i])

export function decideWebhook(command: WebhookCommand, state: WebhookState): WebhookEvent[] {
  switch (command.type) {
    case 'CreateWebhook':
      return state.exists ? [] : [{ type: 'WebhookCreated', data: { webhook_id: command.webhookId, org_id: command.orgId, url: command.url, event_types: command.eventTypes, created_by: command.actorId, at: command.at } }]
    case 'ChangeWebhook': {
      existing(state, command.orgId)
      const changes: { url?: string; event_types?: string[]; is_active?: boolean } = {}
      if (command.url !== undefined && command.url !== state.url) changes.url = command.url
      if (command.eventTypes !== undefined && !sameList(command.eventTypes, state.eventTypes)) changes.event_types = command.eventTypes
      if (command.isActive !== undefined && command.isActive !== state.isActive) changes.is_active = command.isActive
      return Object.keys(changes).length ? [{ type: 'WebhookChanged', data: { ...changes, at: command.at } }] : []
    }
    case 'DisableWebhook':
      existing(state, command.orgId)
      if (!state.isActive || state.activation !== command.activation) return []
      return [{ type: 'WebhookDisabled', data: { reason: command.reason, failures: command.failures, at: command.at } }]
    case 'DeleteWebhook':
      existing(state, command.orgId)
      return [{ type: 'WebhookDeleted', data: { at: command.at } }]
  }
}

export const webhookDecider: Decider<WebhookCommand, WebhookState, WebhookEvent> = { initialState: initialWebhookState, evolve: evolveWebhook, decide: decideWebhook }

export const webhookStreams = streamCategory('webhook')
export const webhookStream = webhookStreams.stream
