/**
 * Issue 38, items 7 and 8, against the real server (local backend): the
 * main-area views — the Jobs view, a sweep's results, a pipeline's graph, a
 * job's log — come back after a reload as notebooks do (JupyterLab's layout
 * restorer), except one whose sweep was deleted meanwhile; and the Jobs
 * view keeps the main area's width when a job's log is opened from it.
 */
import { expect, test } from '@jupyterlab/galata';
import type {
  IJupyterLabPageFixture,
  JupyterLabPage
} from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type {
  IJob,
  IPipeline,
  ISweep,
  ISweepResults
} from '../../labextension/src/api/types';
import { API, apiGet, execute, notebook, sendThroughApi } from './helpers';

const QUICK = notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']);

function tab(page: IJupyterLabPageFixture, label: string | RegExp): Locator {
  return page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
    hasText: label
  });
}

/** The tab of the widget `id` (its title says more once it has loaded). */
function tabOf(page: IJupyterLabPageFixture, id: string): Locator {
  return page.locator(`.lm-DockPanel-tabBar .lm-TabBar-tab[data-id="${id}"]`);
}

/** Wait until the server says job `id` has ended. */
async function ended(page: IJupyterLabPageFixture, path: string) {
  await expect
    .poll(async () => (await apiGet<IJob>(page.request, path)).state, {
      timeout: 120000
    })
    .toMatch(/succeeded|failed|cancelled/);
}

/**
 * The workspace as saved now (Galata keeps it in memory across reloads):
 * the names the restorer keeps, and the main area's layout as text.
 */
async function saved(
  page: IJupyterLabPageFixture
): Promise<{ keys: string[]; main: string }> {
  return page.evaluate(async () => {
    const list = await window.jupyterapp.serviceManager.workspaces.list();
    const data = (list.values[0]?.data ?? {}) as Record<
      string,
      { main?: unknown } | undefined
    >;
    return {
      keys: Object.keys(data),
      main: JSON.stringify(data['layout-restorer:data']?.main ?? null)
    };
  });
}

/** The names the page's state database keeps now under `namespace`. */
async function kept(
  page: IJupyterLabPageFixture,
  namespace: string
): Promise<string[]> {
  return page.evaluate(async namespace => {
    // JupyterLab's IStateDB (Galata's copy of the workspace only ever adds).
    const state = (await window.galata.getPlugin(
      '@jupyterlab/apputils-extension:state' as never
    )) as unknown as { list(namespace: string): Promise<{ ids: string[] }> };
    return (await state.list(namespace)).ids;
  }, namespace);
}

/** Reload, waiting for the app rather than for the Launcher. */
async function reload(page: IJupyterLabPageFixture): Promise<void> {
  // Galata's reload (the fixture is its JupyterLabPage), told not to wait
  // for the Launcher in front: the restored layout has another there.
  await (page as unknown as JupyterLabPage).reload({ waitForIsReady: false });
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
}

test.describe('Main-area views', () => {
  test('come back after a reload, unless their sweep was deleted', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(300000);
    const tag = `rv${test.info().retry}-${Date.now()}`;
    const job = await sendThroughApi<IJob>(page, `${tmpPath}/j.ipynb`, QUICK, {
      name: `${tag}-job`
    });
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/s.ipynb`,
      QUICK,
      { name: `${tag}-sweep`, sweep: { alpha: [1, 2] } }
    );
    await page.contents.uploadContent(QUICK, 'text', `${tmpPath}/p.ipynb`);
    const node = { notebook_path: `${tmpPath}/p.ipynb`, backend: 'local' };
    const response = await page.request.post(`${API}/pipelines`, {
      data: {
        name: `${tag}-pipeline`,
        nodes: [
          { id: 'first', ...node },
          { id: 'second', ...node, after: ['first'] }
        ]
      }
    });
    expect(response.status()).toBe(201);
    const pipeline: IPipeline = await response.json();
    await ended(page, `jobs/${job.id}`);
    await ended(page, `sweeps/${sweep.id}`);

    await execute(page, 'jupyter-gpu-env:open-jobs');
    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    await execute(page, 'jupyter-gpu-env:pipeline-open', { id: pipeline.id });
    await execute(page, 'jupyter-gpu-env:show-job-log', { id: job.id });
    const names = [
      'gpu-env-jobs:jobs',
      `gpu-env-sweep-results:${sweep.id}`,
      `gpu-env-pipeline:${pipeline.id}`,
      `gpu-env-job-log:${job.id}`
    ];
    // Saved with the layout before the page is left.
    await expect
      .poll(async () => {
        const state = await saved(page);
        return names.filter(
          name => state.keys.includes(name) && state.main.includes(name)
        );
      })
      .toEqual(names);

    await reload(page);
    // Each tab is back, and shows its content once brought to the front.
    await tab(page, /^Jobs$/).click();
    await expect(
      page
        .getByTestId('gpu-env-jobs-view')
        .locator(`[data-testid="gpu-env-jobs-row"][data-id="${sweep.id}"]`)
    ).toBeVisible();
    await tabOf(page, `jupyter-gpu-env-sweep-results-${sweep.id}`).click();
    await expect(
      page.getByTestId('gpu-env-sweep-results').getByTestId('gpu-env-sweep-row')
    ).toHaveCount(2);
    await tabOf(page, `jupyter-gpu-env-pipeline-${pipeline.id}`).click();
    await expect(page.getByTestId('gpu-env-pipeline-node')).toHaveCount(2);
    await tabOf(page, `jupyter-gpu-env-job-log-${job.id}`).click();
    await expect(page.getByTestId('gpu-env-job-log')).toHaveAttribute(
      'data-state',
      'ended',
      { timeout: 30000 }
    );
    await expect(page.getByTestId('gpu-env-job-log').locator('pre')).toHaveText(
      /1/
    );

    // A sweep is its runs: with them deleted, its results do not come back
    // (no empty tab, no error), and the restorer forgets them.
    const results = await apiGet<ISweepResults>(
      page.request,
      `sweeps/${sweep.id}/results`
    );
    for (const row of results.rows) {
      const gone = await page.request.delete(`${API}/jobs/${row.job_id}`);
      expect(gone.ok()).toBe(true);
    }
    await reload(page);
    await expect(tab(page, /^Jobs$/)).toHaveCount(1);
    await expect(
      tabOf(page, `jupyter-gpu-env-pipeline-${pipeline.id}`)
    ).toHaveCount(1);
    await expect(
      tabOf(page, `jupyter-gpu-env-sweep-results-${sweep.id}`)
    ).toHaveCount(0);
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    await expect
      .poll(() => kept(page, 'gpu-env-sweep-results'))
      .not.toContain(`gpu-env-sweep-results:${sweep.id}`);
    expect(await kept(page, 'gpu-env-pipeline')).toContain(
      `gpu-env-pipeline:${pipeline.id}`
    );
  });

  test('the Jobs view keeps the full width when a log opens from it', async ({
    page,
    tmpPath
  }) => {
    const tag = `wv${test.info().retry}-${Date.now()}`;
    const job = await sendThroughApi<IJob>(page, `${tmpPath}/w.ipynb`, QUICK, {
      name: `${tag}-job`
    });
    const dock = page.locator('#jp-main-dock-panel');
    const width = async (locator: Locator): Promise<number> =>
      (await locator.boundingBox())!.width;

    await execute(page, 'jupyter-gpu-env:open-jobs');
    const view = page.locator('.jp-GpuEnv-jobsWidget');
    const row = view.locator(
      `[data-testid="gpu-env-jobs-row"][data-id="${job.id}"]`
    );
    await row.locator('[data-action="log"]').click();
    await expect(page.getByTestId('gpu-env-job-log')).toBeVisible();
    // The log is a tab of its own, not a split that halves the table.
    await tab(page, /^Jobs$/).click();
    await expect(view).toBeVisible();
    expect(await width(view)).toBeGreaterThan((await width(dock)) * 0.95);

    // Beside a document it was asked from, the log still splits.
    await page.contents.uploadContent('notes', 'text', `${tmpPath}/notes.txt`);
    await execute(page, 'docmanager:open', { path: `${tmpPath}/notes.txt` });
    await tab(page, `Log: ${tag}-job`)
      .locator('.lm-TabBar-tabCloseIcon')
      .click();
    await tab(page, 'notes.txt').click();
    await execute(page, 'jupyter-gpu-env:show-job-log', { id: job.id });
    const log = page.getByTestId('gpu-env-job-log');
    await expect(log).toBeVisible();
    expect(await width(log)).toBeLessThan((await width(dock)) * 0.6);
  });
});
