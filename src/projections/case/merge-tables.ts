/**
 * The merges read model (merges.ts): which duplicate is merged into which case (`case_merges`, one
 * row per duplicate while merged), and every case id whose mail and links now reach another case
 * (`case_aliases`: a duplicate, and the duplicates merged into it before, each to the one survivor).
 */
export type CaseMergeRow = { source_id: string; org_id: string; into_id: string; merged_by: string | null; merged_at: Date }
export type CaseAliasRow = { alias_id: string; org_id: string; case_id: string }

export type CaseMergeTables = { case_merges: CaseMergeRow; case_aliases: CaseAliasRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseMergeTables {}
}
