/**
 * The sample-data packs this server offers (the original's vertical packs, sample data only): a
 * few accounts, contacts, deals, leads and tasks that show a new organization what the CRM looks
 * like. Each item has a `key`, stable across versions, from which its record's id is derived, and
 * names the records it points at by their keys. The contents are this service's own.
 */

export type SampleAccount = { key: string; name: string; industry: string; city: string; country: string; website: string; description: string }
export type SampleContact = { key: string; first_name: string; last_name: string; email: string; title: string; account: string }
export type SampleDeal = { key: string; name: string; account: string; amount: string; probability: number; closed_on: string; description: string }
export type SampleLead = { key: string; first_name: string; last_name: string; email: string; company_name: string; source: 'call' | 'email' | 'partner' | 'other'; description: string }
export type SampleTask = { key: string; title: string; priority: 'Low' | 'Medium' | 'High'; due_date: string; parent: { account: string } | { deal: string } | { lead: string } }

export type Pack = {
  id: string
  name: string
  description: string
  version: number
  accounts: readonly SampleAccount[]
  contacts: readonly SampleContact[]
  deals: readonly SampleDeal[]
  leads: readonly SampleLead[]
  tasks: readonly SampleTask[]
}

export const PACKS: readonly Pack[] = [
  {
    id: 'professional-services',
    name: 'Professional services',
    description: 'Consultancies and agencies: client accounts, engagements in the pipeline and enquiries to follow up.',
    version: 1,
    accounts: [
      { key: 'lumen', name: 'Lumen Analytics (sample)', industry: 'CONSULTING', city: 'Leeds', country: 'GB', website: 'https://lumen.example.com', description: 'Data team of twelve; wants a reporting overhaul.' },
      { key: 'harbor', name: 'Harbor & Finch Legal (sample)', industry: 'LEGAL', city: 'Bristol', country: 'GB', website: 'https://harborfinch.example.com', description: 'Mid-size law firm moving its intake online.' },
    ],
    contacts: [
      { key: 'ines', first_name: 'Ines', last_name: 'Varga', email: 'ines.varga@lumen.example.com', title: 'Head of Data', account: 'lumen' },
      { key: 'tom', first_name: 'Tom', last_name: 'Achebe', email: 'tom.achebe@harborfinch.example.com', title: 'Operations Partner', account: 'harbor' },
    ],
    deals: [
      { key: 'lumen-reporting', name: 'Lumen reporting overhaul (sample)', account: 'lumen', amount: '18000.00', probability: 40, closed_on: '2027-03-31', description: 'Discovery workshop done; proposal due.' },
      { key: 'harbor-intake', name: 'Harbor & Finch intake portal (sample)', account: 'harbor', amount: '26500.00', probability: 20, closed_on: '2027-05-15', description: 'Early conversations with the operations partner.' },
    ],
    leads: [
      { key: 'quill', first_name: 'Maya', last_name: 'Lindqvist', email: 'maya@quillstudio.example.com', company_name: 'Quill Studio', source: 'partner', description: 'Referred by Lumen; needs a brand audit.' },
      { key: 'orchard', first_name: 'Ravi', last_name: 'Menon', email: 'ravi.menon@orchardhealth.example.com', company_name: 'Orchard Health', source: 'email', description: 'Asked for a fixed-price quote.' },
    ],
    tasks: [
      { key: 'send-proposal', title: 'Send the Lumen proposal (sample)', priority: 'High', due_date: '2027-01-15', parent: { deal: 'lumen-reporting' } },
      { key: 'call-ravi', title: 'Call Ravi about the quote (sample)', priority: 'Medium', due_date: '2027-01-20', parent: { lead: 'orchard' } },
    ],
  },
  {
    id: 'software-sales',
    name: 'Software sales',
    description: 'SaaS teams: trial accounts, expansion deals and inbound sign-ups.',
    version: 1,
    accounts: [
      { key: 'northwind', name: 'Northwind Logistics (sample)', industry: 'TRANSPORTATION', city: 'Rotterdam', country: 'NL', website: 'https://northwind.example.com', description: 'On a 30-seat trial since last month.' },
      { key: 'kestrel', name: 'Kestrel Foods (sample)', industry: 'FOOD & BEVERAGE', city: 'Lyon', country: 'FR', website: 'https://kestrel.example.com', description: 'Customer for two years; asking about the API tier.' },
    ],
    contacts: [
      { key: 'anouk', first_name: 'Anouk', last_name: 'de Wit', email: 'anouk.dewit@northwind.example.com', title: 'IT Manager', account: 'northwind' },
      { key: 'lucien', first_name: 'Lucien', last_name: 'Marchal', email: 'lucien.marchal@kestrel.example.com', title: 'CTO', account: 'kestrel' },
    ],
    deals: [
      { key: 'northwind-seats', name: 'Northwind 30 seats (sample)', account: 'northwind', amount: '10800.00', probability: 60, closed_on: '2027-02-28', description: 'Trial ends soon; pricing call booked.' },
      { key: 'kestrel-api', name: 'Kestrel API tier upgrade (sample)', account: 'kestrel', amount: '7200.00', probability: 30, closed_on: '2027-04-30', description: 'Needs a security review first.' },
    ],
    leads: [
      { key: 'pinecrest', first_name: 'Grace', last_name: 'Okoye', email: 'grace@pinecrest.example.com', company_name: 'Pinecrest Schools', source: 'other', description: 'Signed up for the newsletter, then booked a demo.' },
      { key: 'vela', first_name: 'Jonas', last_name: 'Berg', email: 'jonas.berg@velamarine.example.com', company_name: 'Vela Marine', source: 'call', description: 'Called about fleet tracking.' },
    ],
    tasks: [
      { key: 'trial-review', title: 'Review Northwind trial usage (sample)', priority: 'High', due_date: '2027-01-12', parent: { account: 'northwind' } },
      { key: 'demo-grace', title: 'Demo for Pinecrest (sample)', priority: 'Medium', due_date: '2027-01-18', parent: { lead: 'pinecrest' } },
    ],
  },
]

/** A pack by id; an unknown id (anything path-shaped included) is undefined: ids are keys of this list, never paths. */
export const packById = (id: string): Pack | undefined => PACKS.find((pack) => pack.id === id)
