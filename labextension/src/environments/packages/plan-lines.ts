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

/** `3 packages; 1.2 MiB to download.` */
export function planSummary(plan: IPackagesPlan): string {
  const count = plan.changes.length;
  return (
    `${count} package${count === 1 ? '' : 's'}; ` +
    `${formatBytes(plan.download_bytes)} to download.`
  );
}
