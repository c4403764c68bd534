/** The enumerations of a deal's fields (§2.1), with their display labels for the `[value, label]` pick lists. */
export const OPPORTUNITY_TYPES = ['NEW_BUSINESS', 'EXISTING_BUSINESS', 'RENEWAL', 'UPSELL', 'CROSS_SELL'] as const

/** Uppercase, and not the lead source list (§2.1, §2.5). */
export const LEAD_SOURCES = ['NONE', 'CALL', 'EMAIL', 'EXISTING CUSTOMER', 'PARTNER', 'PUBLIC RELATIONS', 'CAMPAIGN', 'WEBSITE', 'OTHER'] as const

const titleCase = (value: string) => value.toLowerCase().replace(/(^|[\s_])\p{L}/gu, (m) => m.toUpperCase()).replace(/_/g, ' ')

export const leadSourceChoices = (): [string, string][] => LEAD_SOURCES.map((v) => [v, titleCase(v)])

/**
 * ISO 4217 codes and English names from the ICU data that ships with Node (maintained with CLDR;
 * no extra package needed), the list organization settings validate against (`isCurrency`).
 */
const currencyNames = new Intl.DisplayNames(['en'], { type: 'currency' })
// Built once: the same ~300 names on every deal list and detail were 2% of a loaded server's CPU (issue 20).
const CURRENCY_CHOICES: [string, string][] = Intl.supportedValuesOf('currency').map((code) => [code, `${code}, ${currencyNames.of(code) ?? code}`])
export const currencyChoices = (): [string, string][] => CURRENCY_CHOICES
