/**
 * What the plan dialog says of each change before anything is applied.
 */
import type { IPackagesPlan, IPlannedChange } from '../../../src/api/types';
import {
  describeFailure,
  describePlanning,
  isUnrequestedRemoval,
  planCells,
  planDownload,
  planSource,
  planSummary,
  planVerb,
  planVersions
} from '../../../src/environments/packages/plan-lines';

function change(overrides: Partial<IPlannedChange>): IPlannedChange {
  return {
    action: 'install',
    name: 'numpy',
    kind: 'conda',
    version_before: null,
    version_after: '2.0.1',
    download_bytes: 1024 ** 2,
    requested: true,
    ...overrides
  };
}

describe('plan lines', () => {
  it('a change of build is a rebuild; the other verbs are as named', () => {
    expect(planVerb('change')).toBe('rebuild');
    expect(planVerb('downgrade')).toBe('downgrade');
    expect(planVerb('remove')).toBe('remove');
  });

  it('names where the package comes from', () => {
    expect(planSource(change({ kind: 'pypi' }))).toBe('PyPI');
    expect(planSource(change({ kind: 'conda' }))).toBe('conda');
  });

  it('shows a version move with an arrow, else the one version', () => {
    expect(
      planVersions(change({ version_before: '1.26', version_after: '2.0' }))
    ).toBe('1.26 → 2.0');
    expect(planVersions(change({ version_before: null }))).toBe('2.0.1');
    expect(
      planVersions(
        change({ action: 'remove', version_before: '1.0', version_after: null })
      )
    ).toBe('1.0');
    expect(
      planVersions(change({ version_before: '3.1', version_after: '3.1' }))
    ).toBe('3.1');
    expect(
      planVersions(change({ version_before: null, version_after: null }))
    ).toBe('');
  });

  it('says what must be downloaded', () => {
    expect(planDownload(change({ download_bytes: 1536 }))).toBe('1.5 KiB');
    expect(planDownload(change({ download_bytes: 0 }))).toBe('cached');
    expect(planDownload(change({ download_bytes: null }))).toBe('size unknown');
    expect(planDownload(change({ action: 'remove', download_bytes: 9 }))).toBe(
      ''
    );
  });

  it("a row's cells are verb, package, source, versions, download", () => {
    expect(
      planCells(
        change({
          action: 'upgrade',
          kind: 'pypi',
          name: 'requests',
          version_before: '2.31',
          version_after: '2.32',
          download_bytes: 0
        })
      )
    ).toEqual(['upgrade', 'requests', 'PyPI', '2.31 → 2.32', 'cached']);
  });

  it('marks the removals the user did not name', () => {
    expect(
      isUnrequestedRemoval(change({ action: 'remove', requested: false }))
    ).toBe(true);
    expect(
      isUnrequestedRemoval(change({ action: 'remove', requested: true }))
    ).toBe(false);
    expect(
      isUnrequestedRemoval(change({ action: 'install', requested: false }))
    ).toBe(false);
  });

  it('sums the plan up', () => {
    const plan = {
      environment: 'mine',
      changes: [change({}), change({ name: 'scipy' })],
      download_bytes: 3 * 1024 ** 2,
      unrequested_removals: [],
      runs_notebooks: false,
      warnings: []
    } as IPackagesPlan;
    expect(planSummary(plan)).toBe('2 packages; 3.0 MiB to download.');
    expect(planSummary({ ...plan, changes: [change({})] })).toBe(
      '1 package; 3.0 MiB to download.'
    );
  });

  it('never sums to 0 B what the channels did not size', () => {
    const plan = {
      environment: 'mine',
      changes: [
        change({ kind: 'pypi', download_bytes: null }),
        change({ name: 'six', kind: 'pypi', download_bytes: null })
      ],
      download_bytes: 0,
      unrequested_removals: [],
      runs_notebooks: false,
      warnings: []
    } as IPackagesPlan;
    expect(planSummary(plan)).toBe('2 packages; download size unknown.');
    const some = {
      ...plan,
      changes: [change({}), change({ name: 'six', download_bytes: null })],
      download_bytes: 1024 ** 2
    };
    expect(planSummary(some)).toBe(
      '2 packages; at least 1.0 MiB to download (1 of unknown size).'
    );
    const cached = {
      ...plan,
      changes: [
        change({ download_bytes: 0 }),
        change({ name: 'x', action: 'remove', download_bytes: null })
      ]
    };
    expect(planSummary(cached)).toBe('2 packages; nothing to download.');
  });
});

describe('planning and its failures, in words', () => {
  it('says it plans, with the progress the task reports', () => {
    expect(describePlanning(0, 'Starting')).toBe('Planning…');
    expect(describePlanning(0.4, 'Solving the request')).toBe(
      'Planning… 40% (solving the request)'
    );
  });

  it('names the failure, shows the first line, keeps the rest a click away', () => {
    const solver =
      'The request cannot be satisfied: cannot solve the request because of:\n' +
      '└─ python 3.9.* cannot be installed because there are no viable options';
    const failed = describeFailure(solver, 'unsolvable', ['solving…']);
    expect(failed.headline).toBe(
      'These packages cannot be installed together.'
    );
    expect(failed.summary).toBe(
      'The request cannot be satisfied: cannot solve the request because of:'
    );
    expect(failed.detail).toBe(`${solver}\n\nsolving…\n\n(unsolvable)`);
    expect(failed.more).toBe(true);

    const missing = describeFailure(
      "'no-such-pkg' not found in channels file:///c",
      'package_not_found'
    );
    expect(missing.headline).toMatch(/^A package is not in the channels/);
    expect(missing.summary).toBe(
      "'no-such-pkg' not found in channels file:///c"
    );
    expect(missing.more).toBe(false);
    expect(missing.detail).toBe(
      "'no-such-pkg' not found in channels file:///c\n\n(package_not_found)"
    );

    // A PyPI package: headed in the index's words, not the channels'.
    const pypi = describeFailure(
      "No package named like 'nosuch' on the package index: check the name.",
      'pypi_package_not_found'
    );
    expect(pypi.headline).toMatch(/^A package is not on the package index/);
    expect(pypi.headline).not.toMatch(/channels/);

    const long = describeFailure('x'.repeat(300), null);
    expect(long.headline).toBe('The plan could not be made.');
    expect(long.summary).toHaveLength(241);
    expect(long.summary.endsWith('…')).toBe(true);
    expect(long.detail).toBe('x'.repeat(300));
    expect(long.more).toBe(true);
  });
});
