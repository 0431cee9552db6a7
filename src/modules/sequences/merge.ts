/**
 * Merge fields of step bodies and subjects: `{{first_name}}`, or with a fallback for an empty value,
 * `{{first_name|there}}`. The names are a closed list, checked when a sequence is written.
 */

export const MERGE_FIELDS = [
  'first_name',
  'last_name',
  'full_name',
  'title',
  'company_name',
  'email',
] as const;
export type MergeField = (typeof MERGE_FIELDS)[number];
export type MergeValues = Record<MergeField, string | null>;

const KNOWN = new Set<string>(MERGE_FIELDS);
const TAG = /\{\{\s*([^{}|]*?)\s*(?:\|([^{}]*))?\}\}/g;

/** The merge fields a text uses that are not known, in order of appearance, each once. */
export function unknownMergeFields(text: string): string[] {
  const unknown = new Set<string>();
  for (const [, name] of text.matchAll(TAG)) if (!KNOWN.has(name)) unknown.add(name);
  return [...unknown];
}

/** The text with each merge field replaced by the contact's value, its fallback, or nothing. */
export function renderMergeFields(text: string, values: MergeValues): string {
  return text.replace(TAG, (tag, name: string, fallback: string | undefined) => {
    if (!KNOWN.has(name)) return tag;
    const value = values[name as MergeField]?.trim();
    return value ? value : (fallback?.trim() ?? '');
  });
}
