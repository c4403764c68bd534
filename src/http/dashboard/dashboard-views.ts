/**
 * Text the dashboard ships prebuilt (the Today queue's one-line rows, the feed's "3 hours ago"):
 * pure functions of their inputs, with no floating point on money. Every other dashboard field is
 * structured (decimal strings, counts, dates) for the client to format.
 */

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', INR: '₹', AUD: 'A$', CAD: 'C$' }

/** A decimal string rounded half away from zero to `places` decimals, exactly (integer arithmetic): "1100.005" → "1100.01". */
export function roundDecimal(amount: string, places: number): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount.trim())
  if (!match) return '0'
  const [, sign, whole, fraction = ''] = match
  let units = BigInt(whole! + fraction.padEnd(places, '0').slice(0, places))
  if (Number(fraction[places] ?? 0) >= 5) units += 1n
  if (units === 0n) return '0'
  const digits = units.toString().padStart(places + 1, '0')
  return `${sign}${places ? `${digits.slice(0, -places)}.${digits.slice(-places)}` : digits}`
}

/** A decimal string rounded to whole units, with thousands separators: "-42,001". */
function wholeUnits(amount: string): string {
  return roundDecimal(amount, 0).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/** The decimals of a currency's minor unit as Intl knows them (USD 2, JPY 0, BHD 3); 2 for a code it does not know. */
export function currencyDecimals(code: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/**
 * A decimal sum as a JSON number, for clients that parse numbers (the original's phone app casts
 * `as num`): rounded exactly to the currency's decimals first, so the number's shortest text, which
 * JSON writes, is that decimal digit for digit while it has at most 15 significant digits (sums
 * below 10^13 in a 2-decimal currency); past that a double cannot hold it and the decimal strings
 * of the deal and goal routes are the exact figures.
 */
export const moneyNumber = (amount: string, currency: string): number => Number(roundDecimal(amount, currencyDecimals(currency)))

/** Money for a human sentence, as the original writes it: "$42,000", or "CHF 42,000" for a currency without a symbol. */
export function moneyLine(amount: string | null, currency: string | null): string {
  const units = wholeUnits(amount ?? '0')
  const code = (currency ?? '').toUpperCase()
  const symbol = SYMBOLS[code]
  if (symbol) return units.startsWith('-') ? `-${symbol}${units.slice(1)}` : `${symbol}${units}`
  return `${code} ${units}`.trim()
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']

/** The short weekday of a calendar date (YYYY-MM-DD): "Mon". */
export const weekday = (date: string): string => WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!

// A formatter per time zone, made once: making one cost ~5% of a board move's server CPU (bench:cpu).
const dayFormats = new Map<string, Intl.DateTimeFormat>()
/** The calendar date `now` falls on in a time zone, YYYY-MM-DD. */
export function dateIn(timeZone: string, now: Date): string {
  let format = dayFormats.get(timeZone)
  if (!format) dayFormats.set(timeZone, (format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })))
  return format.format(now)
}

/** A calendar date moved by whole days. */
export const addDays = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

/** The first day of the date's month, and of the next month. */
export function monthOf(date: string): { from: string; to: string } {
  const year = Number(date.slice(0, 4))
  const month = Number(date.slice(5, 7))
  const next = month === 12 ? `${year + 1}-01-01` : `${year}-${String(month + 1).padStart(2, '0')}-01`
  return { from: `${date.slice(0, 7)}-01`, to: next }
}

/** How long ago, in words ("just now", "5 minutes ago", "a day ago", "3 months ago"); a time ahead of `now` reads "just now". */
export function humanizedTime(at: Date, now: Date): string {
  const seconds = Math.max(0, (now.getTime() - at.getTime()) / 1000)
  const steps: [limit: number, one: string, unit: number, many: string][] = [
    [90, 'a minute ago', 60, 'minutes'],
    [45 * 60, '', 60, 'minutes'],
    [90 * 60, 'an hour ago', 3600, 'hours'],
    [22 * 3600, '', 3600, 'hours'],
    [36 * 3600, 'a day ago', 86_400, 'days'],
    [26 * 86_400, '', 86_400, 'days'],
    [45 * 86_400, 'a month ago', 30 * 86_400, 'months'],
    [320 * 86_400, '', 30 * 86_400, 'months'],
    [548 * 86_400, 'a year ago', 365 * 86_400, 'years'],
  ]
  if (seconds < 45) return 'just now'
  for (const [limit, one, unit, many] of steps) {
    if (seconds < limit) return one || `${Math.max(2, Math.round(seconds / unit))} ${many} ago`
  }
  return `${Math.max(2, Math.round(seconds / (365 * 86_400)))} years ago`
}
