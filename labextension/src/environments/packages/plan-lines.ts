/**
 * What each line of a package plan says (verb, source, versions, download)
 * and its summary: the pure part of the plan dialog.
 */
import type {
  IPackagesPlan,
  IPlannedChange,
  PlanAction
} from '../../api/types';
import { formatBytes } from '../../components/format';

const VERBS: Record<PlanAction, string> = {
  install: 'install',
  upgrade: 'upgrade',
  downgrade: 'downgrade',
  change: 'rebuild',
  remove: 'remove'
};

/** The verb a change shows: a `change` (same version, new build) rebuilds. */
export function planVerb(action: PlanAction): string {
  return VERBS[action];
}

/** Where the package comes from: `PyPI` or `conda`. */
export function planSource(change: IPlannedChange): string {
  return change.kind === 'pypi' ? 'PyPI' : 'conda';
}

/** `1.0 → 2.0` when the version moves, else the one version known. */
export function planVersions(change: IPlannedChange): string {
  const before = change.version_before ?? '';
  const after = change.version_after ?? '';
  if (before && after && before !== after) {
    return `${before} → ${after}`;
  }
  return after || before;
}

/** What must be downloaded: nothing for a removal, `cached`, or a size. */
export function planDownload(change: IPlannedChange): string {
  if (change.action === 'remove') {
    return '';
  }
  if (change.download_bytes === null) {
    return 'size unknown';
  }
  return change.download_bytes === 0
    ? 'cached'
    : formatBytes(change.download_bytes);
}

/** A row of the plan's table: verb, package, source, versions, download. */
export function planCells(change: IPlannedChange): string[] {
  return [
    planVerb(change.action),
    change.name,
    planSource(change),
    planVersions(change),
    planDownload(change)
  ];
}

/** A removal the user did not name (it needs an explicit tick). */
export function isUnrequestedRemoval(change: IPlannedChange): boolean {
  return change.action === 'remove' && !change.requested;
}

/**
 * `3 packages; 1.2 MiB to download.`: what the download column adds up to,
 * without a sum that leaves out the sizes the channels did not tell
 * (`at least 1.2 MiB`, or `download size unknown`).
 */
export function planSummary(plan: IPackagesPlan): string {
  const count = plan.changes.length;
  const fetched = plan.changes.filter(
    change => change.action !== 'remove' && change.download_bytes !== 0
  );
  const unknown = fetched.filter(change => change.download_bytes === null);
  let download: string;
  if (fetched.length === 0) {
    download = 'nothing to download';
  } else if (unknown.length === 0) {
    download = `${formatBytes(plan.download_bytes)} to download`;
  } else if (unknown.length === fetched.length) {
    download = 'download size unknown';
  } else {
    download =
      `at least ${formatBytes(plan.download_bytes)} to download ` +
      `(${unknown.length} of unknown size)`;
  }
  return `${count} package${count === 1 ? '' : 's'}; ${download}.`;
}

/** `Planning… 40% (solving)`: what a dialog says while its plan is made. */
export function describePlanning(progress: number, message: string): string {
  const percent = progress > 0 ? ` ${Math.round(progress * 100)}%` : '';
  const doing = IDLE_MESSAGES.has(message) ? '' : ` (${lowerFirst(message)})`;
  return `Planning…${percent}${doing}`;
}

/** A task's messages that say nothing of what it does. */
const IDLE_MESSAGES = new Set(['', 'Starting', 'Waiting to start', 'Done']);

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Why a plan failed, as its dialog shows it. */
export interface IPlanFailure {
  /** What kind of failure, in words: "A package is not in the channels." */
  headline: string;
  /** The server's first line. */
  summary: string;
  /** The whole message and the task's log (with the reason's code). */
  detail: string;
  /** Whether the detail says more than the summary. */
  more: boolean;
}

/** The longest first line shown whole; the rest is in the details. */
const SUMMARY_MAX = 240;

const HEADLINES: Record<string, string> = {
  package_not_found:
    'A package is not in the channels: check its name (the field suggests ' +
    'names as you type).',
  pypi_package_not_found:
    'A package is not on the package index: check its name (the field ' +
    'suggests names as you type).',
  not_found: 'Something named is not there.',
  unsolvable: 'These packages cannot be installed together.',
  channel_unavailable:
    'A package channel could not be reached: try again later, or ask an ' +
    'administrator whether it is available from this server.',
  install_failed: 'The installer failed.'
};

/**
 * What a dialog says of a failed plan: a headline from the `reason`, the
 * message's first line, and the whole output (message, `log` lines and the
 * reason's code) to open.
 */
export function describeFailure(
  message: string,
  reason: string | null,
  log: readonly string[] = []
): IPlanFailure {
  const text = message.trim() || 'The plan could not be made.';
  const [first, ...rest] = text.split('\n');
  const long = first.length > SUMMARY_MAX;
  const more = long || rest.some(line => line.trim()) || log.length > 0;
  const detail = [
    text,
    ...(log.length ? ['', ...log] : []),
    ...(reason ? ['', `(${reason})`] : [])
  ].join('\n');
  return {
    headline:
      (reason ? HEADLINES[reason] : undefined) ?? 'The plan could not be made.',
    summary: long ? `${first.slice(0, SUMMARY_MAX).trimEnd()}…` : first.trim(),
    detail,
    more
  };
}
