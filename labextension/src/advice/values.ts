/**
 * The pure rules of right-size advice (`GET jobs/advice`): the one button
 * that takes a suggestion and when it is worth showing, the "likely to start
 * soonest" line, how a priority reads, and when a kernel's GPU memory has
 * changed enough to ask again.
 */
import type {
  IGpuAdvice,
  IJobAttempt,
  IPriorityOffer,
  IStartOption,
  ISuggestedResources,
  JobPriority
} from '../api/types';

/** The GPU fields of the send dialog as typed: a count, a MIG profile. */
export interface IGpuFields {
  gpus: string;
  mig_profile: string;
}

/** "Use 1g.10gb", "Use 1 GPU", "Use 2 GPUs", "Use no GPU". */
export function suggestionLabel(suggestion: ISuggestedResources): string {
  if (suggestion.mig_profile) {
    return `Use ${suggestion.mig_profile}`;
  }
  const gpus = suggestion.gpus ?? 0;
  return gpus === 0 ? 'Use no GPU' : `Use ${gpus} GPU${gpus === 1 ? '' : 's'}`;
}

/** The fields that take `suggestion`: a MIG profile, or a GPU count. */
export function fieldsFor(suggestion: ISuggestedResources): IGpuFields {
  if (suggestion.mig_profile) {
    return { gpus: '', mig_profile: suggestion.mig_profile };
  }
  return { gpus: String(suggestion.gpus ?? 0), mig_profile: '' };
}

/**
 * Whether the fields already ask for `suggestion` (an empty GPU count is no
 * GPU, as the backend reads it).
 */
export function suggestionMatches(
  suggestion: ISuggestedResources,
  fields: IGpuFields
): boolean {
  if (suggestion.mig_profile) {
    return fields.mig_profile === suggestion.mig_profile;
  }
  if (fields.mig_profile) {
    return false;
  }
  const typed = fields.gpus.trim() === '' ? 0 : Number(fields.gpus);
  return typed === (suggestion.gpus ?? 0);
}

/** The button's label, or null where none is needed (nothing to take). */
export function adviceButton(
  advice: IGpuAdvice,
  fields: IGpuFields
): string | null {
  const { suggestion } = advice;
  if (!suggestion || suggestionMatches(suggestion, fields)) {
    return null;
  }
  return suggestionLabel(suggestion);
}

/** What the "likely to start soonest" line says, and where a click goes. */
export interface ISoonestLine {
  text: string;
  /** Another backend to switch to; null where it is the one chosen. */
  switchTo: string | null;
}

/** "local: 2 free 1g.10gb slices now; no job waiting." → "local — 2 free…". */
export function describeStart(option: IStartOption): string {
  const prefix = `${option.backend}: `;
  const rest = option.sentence.startsWith(prefix)
    ? option.sentence.slice(prefix.length)
    : option.sentence;
  const where = option.queue
    ? `${option.backend} (${option.queue})`
    : option.backend;
  return `${where} — ${rest.replace(/\.$/, '')}`;
}

/**
 * "Likely to start soonest: slurm — 2 free 1g.10gb slices now": the first
 * option, and a switch where it is not `backend`; null without options.
 */
export function soonestLine(
  advice: IGpuAdvice,
  backend: string
): ISoonestLine | null {
  const first = advice.soonest[0];
  if (!first || !advice.suggestion) {
    return null;
  }
  return {
    text: `Likely to start soonest: ${describeStart(first)}`,
    switchTo: first.backend === backend ? null : first.backend
  };
}

/** The priorities offered; the choice is shown only beyond `normal`. */
export function offersChoice(offers: IPriorityOffer[] | undefined): boolean {
  return (offers ?? []).some(offer => offer.name !== 'normal');
}

/** "Normal", "Opportunistic". */
export function priorityLabel(priority: JobPriority): string {
  return priority.charAt(0).toUpperCase() + priority.slice(1);
}

/** When an attempt ended, in words: "preempted", "evicted", "lost with its node". */
export function attemptEnd(reason: IJobAttempt['reason']): string {
  return reason === 'node_lost' ? 'lost with its node' : reason;
}

const TIMES: Record<number, string> = { 1: 'once', 2: 'twice' };

/**
 * "Preempted twice, resumed": how the attempts ended (the server's own
 * words for a job's message), "" for none.
 */
export function attemptsSummary(attempts: IJobAttempt[]): string {
  if (attempts.length === 0) {
    return '';
  }
  const counts = new Map<IJobAttempt['reason'], number>();
  for (const attempt of attempts) {
    counts.set(attempt.reason, (counts.get(attempt.reason) ?? 0) + 1);
  }
  const parts = [...counts].map(
    ([reason, n]) => `${attemptEnd(reason)} ${TIMES[n] ?? `${n} times`}`
  );
  const text = `${parts.join(', ')}, resumed`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** 256 MiB: less than this, a kernel's GPU memory has not changed. */
const MIN_CHANGE = 256 * 1024 ** 2;

/**
 * Whether a kernel's GPU memory changed enough since the advice was asked
 * (`before`: the bytes then; undefined: never asked) to ask again: by a
 * quarter and at least 256 MiB. Not on every poll.
 */
export function worthAsking(before: number | undefined, now: number): boolean {
  if (now <= 0) {
    return false;
  }
  if (before === undefined) {
    return true;
  }
  const change = Math.abs(now - before);
  return change >= MIN_CHANGE && change >= before / 4;
}
