import {
  activityPhrase,
  byDueDate,
  channels,
  clean,
  contactLabel,
  dealLabel,
  listOf,
  newestFirst,
  sentence,
  taskLabel,
} from './phrasing.ts';
import type { BriefSource, GistActivity, PrecallBrief } from './types.ts';

/** Interactions a brief names one by one; older ones are counted, not told. */
const TOLD_INTERACTIONS = 4;
const MAX_TALKING_POINTS = 6;

/**
 * The builtin pre-call brief: the contact's gist (who, company, open deals, tasks), then the last
 * interactions with what each said (a call's summary, an SMS's text, a note), then talking points.
 * Deterministic and offline. `gist` is the builtin summary of the contact with its last activity.
 */
export function writeBrief(source: BriefSource, gist: string): Omit<PrecallBrief, 'model'> {
  const sentences = [gist];
  const interactions = newestFirst(source.recent_activities);
  const told = interactions.slice(0, TOLD_INTERACTIONS).map(interaction);
  if (told.length) sentences.push(sentence(`Last interactions: ${told.join('; ')}`));
  if (interactions.length > TOLD_INTERACTIONS)
    sentences.push(sentence(`${interactions.length - TOLD_INTERACTIONS} earlier interactions are on record`));
  if (source.purpose?.trim()) sentences.push(sentence(`Purpose of the call: ${clean(source.purpose, 200)}`));
  return { brief: sentences.join(' '), talking_points: talkingPoints(source, interactions) };
}

function interaction(activity: GistActivity): string {
  const said = activity.body?.trim() || activity.subject?.trim();
  const phrase = activityPhrase({ ...activity, subject: null, body: null }, true);
  return said ? `${phrase}: “${clean(said, 140)}”` : phrase;
}

function talkingPoints(source: BriefSource, interactions: GistActivity[]): string[] {
  const points: string[] = [];
  if (source.purpose?.trim()) points.push(`Open with the purpose: ${clean(source.purpose, 120)}`);
  const lastCall = interactions.find((activity) => activity.activity_type === 'call');
  if (lastCall?.body?.trim()) points.push(`Follow up on the last call: ${clean(lastCall.body, 120)}`);
  const lastInbound = interactions.find((activity) => activity.direction === 'inbound');
  if (lastInbound && lastInbound !== lastCall)
    points.push(`Answer their last message: ${clean(lastInbound.body ?? lastInbound.subject ?? '', 120)}`);
  for (const deal of source.open_deals.slice(0, 2)) points.push(`Move the deal forward: ${dealLabel(deal)}`);
  const [nextTask] = byDueDate(source.open_tasks);
  if (nextTask) points.push(`Close the open task: ${taskLabel(nextTask)}`);
  const { blocked } = channels(source.contact);
  if (blocked.length) points.push(`Do not use ${listOf(blocked, 2, 'or')}`);
  if (!source.contact.title) points.push(`Ask ${contactLabel(source.contact)} about their role`);
  if (!source.company) points.push('Ask which company they are with');
  if (!points.length) points.push(`Introduce yourself and learn what ${contactLabel(source.contact)} needs`);
  return points.slice(0, MAX_TALKING_POINTS).map((point) => clean(point, 200));
}
