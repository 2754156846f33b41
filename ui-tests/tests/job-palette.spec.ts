/**
 * Issue 27, item 7 (job commands in the palette) and item 5 (the results
 * follow a retry), at JupyterLab's default sidebar width, against the real
 * server (jobs sent through the API and run by the local backend).
 *
 * "Cancel a job…", "Run a job again (rerun)…", "Show a job's log…" and
 * "Open a sweep's results…" ask which with a small picker of the jobs (or
 * sweeps) listed, newest first, each with its state and when; only active
 * jobs to cancel, only ended ones to run again. Picking one does what the
 * row's button does. "Open Jobs" is there too, under the extension's
 * category. Issue 38, item 8: typing "rerun" finds "Run a job again", and
 * "Dask: scale…", "Dask: open dashboard…" and "Cancel a pipeline…" ask
 * which cluster or pipeline.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type {
  IDaskCluster,
  IJob,
  IPipeline,
  ISweep
} from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  dialog,
  dialogButton,
  execute,
  notebook,
  runFromPalette,
  screenshotDialog,
  screenshotPath,
  sendThroughApi
} from './helpers';

const CATEGORY = 'GPU Env';

const QUICK = notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']);
const BROKEN = notebook(
  [['parameters'], 'alpha = 1'],
  [[], "raise ValueError('no convergence')"]
);
const SLOW = notebook(
  [['parameters'], 'alpha = 1'],
  [[], 'import time\ntime.sleep(600)']
);

/** Wait until the server says job `id` is in `state`. */
async function reaches(
  page: IJupyterLabPageFixture,
  id: string,
  state: RegExp
): Promise<void> {
  await expect
    .poll(async () => (await apiGet<IJob>(page.request, `jobs/${id}`)).state, {
      timeout: 120000
    })
    .toMatch(state);
}

/** The open picker's list box (`kind`: job or sweep). */
function picker(page: IJupyterLabPageFixture, kind: 'job' | 'sweep'): Locator {
  return dialog(page).getByTestId(`gpu-env-pick-${kind}`);
}

/** The option of the picker that stands for `id`. */
function option(list: Locator, id: string): Locator {
  return list.locator(`option[value="${id}"]`);
}

function currentTab(page: IJupyterLabPageFixture, label: string): Locator {
  return page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current', {
    hasText: label
  });
}

test.describe('Job commands in the palette', () => {
  test('cancel offers the active jobs, run again the ended ones', async ({
    page,
    tmpPath
  }) => {
    const tag = `jp${test.info().retry}`;
    const done = await sendThroughApi<IJob>(page, `${tmpPath}/q.ipynb`, QUICK, {
      name: `${tag}-done`,
      parameters: { alpha: 4 },
      resources: { cpus: 1 }
    });
    await reaches(page, done.id, /succeeded/);
    const slow = await sendThroughApi<IJob>(page, `${tmpPath}/s.ipynb`, SLOW, {
      name: `${tag}-slow`
    });
    await reaches(page, slow.id, /running/);

    // "Open Jobs" is in the palette under the extension's heading.
    await runFromPalette(page, 'Open Jobs', {
      command: 'jupyter-gpu-env:open-jobs',
      category: CATEGORY
    });
    await expect(currentTab(page, 'Jobs')).toBeVisible();

    // Cancel: only what is queued or running is offered, newest first.
    await runFromPalette(page, 'Cancel a job…', {
      command: 'jupyter-gpu-env:cancel-job',
      category: CATEGORY
    });
    const active = picker(page, 'job');
    await expect(dialog(page)).toContainText('Cancel which job?');
    await expect(option(active, slow.id)).toHaveText(
      new RegExp(`^${tag}-slow — running, started \\d\\d:\\d\\d$`)
    );
    await expect(option(active, done.id)).toHaveCount(0);
    await active.selectOption(slow.id);
    await dialogButton(page, 'Choose').click();
    // The row's own confirmation, then the job is cancelled.
    await expect(dialog(page)).toContainText(`Cancel '${tag}-slow'?`);
    await dialogButton(page, 'Cancel job').click();
    await reaches(page, slow.id, /cancelled/);

    // Run again: only jobs that ended, the cancelled one now among them.
    await runFromPalette(page, 'Run a job again (rerun)…', {
      command: 'jupyter-gpu-env:job-run-again',
      category: CATEGORY
    });
    const ended = picker(page, 'job');
    await expect(option(ended, slow.id)).toHaveText(
      new RegExp(`^${tag}-slow — cancelled, ended`)
    );
    await expect(option(ended, done.id)).toHaveText(
      new RegExp(`^${tag}-done — succeeded, ended`)
    );
    // Newest first: the one sent last is above.
    const values = await ended
      .locator('option')
      .evaluateAll(nodes =>
        nodes.map(node => (node as HTMLOptionElement).value)
      );
    expect(values.indexOf(slow.id)).toBeLessThan(values.indexOf(done.id));
    await screenshotDialog(page, 'jobs-picker.png');
    await ended.selectOption(done.id);
    await dialogButton(page, 'Choose').click();

    // The send dialog, filled from that job's snapshot.
    const form = dialog(page).getByTestId('gpu-env-submit-form');
    await expect(form).toHaveAttribute('data-rerun-of', done.id);
    await expect(form.locator('[data-param="alpha"]')).toHaveValue('4');
    await expect(form.getByTestId('gpu-env-submit-cpus')).toHaveValue('1');
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);
  });

  test("a job's log and a sweep's results, picked from the palette", async ({
    page,
    tmpPath
  }) => {
    // Wide enough for the whole table (the docs' picture of the Jobs view).
    await page.setViewportSize({ width: 1400, height: 800 });
    const tag = `jl${test.info().retry}`;
    const job = await sendThroughApi<IJob>(page, `${tmpPath}/q.ipynb`, QUICK, {
      name: `${tag}-job`,
      parameters: { alpha: 3 }
    });
    const broken = await sendThroughApi<IJob>(
      page,
      `${tmpPath}/b.ipynb`,
      BROKEN,
      { name: `${tag}-broken` }
    );
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/w.ipynb`,
      QUICK,
      { name: `${tag}-sweep`, sweep: { alpha: [1, 2] } }
    );
    await reaches(page, job.id, /succeeded/);
    await reaches(page, broken.id, /failed/);
    await expect
      .poll(
        async () =>
          (await apiGet<ISweep>(page.request, `sweeps/${sweep.id}`)).state,
        { timeout: 120000 }
      )
      .toBe('succeeded');

    // The Jobs view, ours only, the sweep open: the docs' picture.
    await execute(page, 'jupyter-gpu-env:open-jobs');
    const view = page.getByTestId('gpu-env-jobs-view');
    await view.getByTestId('gpu-env-jobs-filter').fill(tag);
    await expect(view.getByTestId('gpu-env-jobs-row')).toHaveCount(3);
    const toggle = view
      .locator(`[data-kind="sweep"][data-id="${sweep.id}"]`)
      .getByRole('button', { name: /the runs of/ });
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') {
      await toggle.click();
    }
    await expect(view.getByTestId('gpu-env-jobs-run')).toHaveCount(2);
    await view.screenshot({ path: screenshotPath('jobs-view-docs.png') });

    await runFromPalette(page, "Show a job's log…", {
      command: 'jupyter-gpu-env:show-job-log',
      category: CATEGORY
    });
    const jobs = picker(page, 'job');
    await expect(option(jobs, job.id)).toHaveText(
      new RegExp(`^${tag}-job — succeeded, ended`)
    );
    await jobs.selectOption(job.id);
    await dialogButton(page, 'Show log').click();
    await expect(currentTab(page, `Log: ${tag}-job`)).toBeVisible();
    await expect(page.getByTestId('gpu-env-job-log')).toBeVisible();

    await runFromPalette(page, "Open a sweep's results…", {
      command: 'jupyter-gpu-env:sweep-results',
      category: CATEGORY
    });
    const sweeps = picker(page, 'sweep');
    await expect(option(sweeps, sweep.id)).toHaveText(
      new RegExp(`^${tag}-sweep — `)
    );
    // Jobs are not sweeps: the single job is not offered.
    await expect(option(sweeps, job.id)).toHaveCount(0);
    await sweeps.selectOption(sweep.id);
    await dialogButton(page, 'Open').click();
    await expect(currentTab(page, `Results: ${tag}-sweep`)).toBeVisible();
    const results = page.getByTestId('gpu-env-sweep-results');
    await expect(results.getByTestId('gpu-env-sweep-row')).toHaveCount(2);
  });
});

test.describe('Sweep results', () => {
  test('follow "Retry failed runs" without a refresh (dark theme)', async ({
    page,
    tmpPath
  }) => {
    await page.theme.setDarkTheme();
    const tag = `retry${test.info().retry}-${Date.now()}`;
    // alpha = 2 fails the first time only: its flag is there on the retry.
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/r.ipynb`,
      notebook(
        [['parameters'], 'alpha = 1'],
        [
          [],
          'import os\n' +
            `flag = '/tmp/gpu-env-ui-${tag}'\n` +
            'if alpha == 2 and not os.path.exists(flag):\n' +
            "    open(flag, 'w').close()\n" +
            "    raise RuntimeError('first try fails')"
        ],
        [['results'], "{'square': alpha ** 2}"]
      ),
      { name: tag, sweep: { alpha: [1, 2, 3] } }
    );
    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    const results = page.getByTestId('gpu-env-sweep-results');
    const rows = results.getByTestId('gpu-env-sweep-row');
    await expect(rows).toHaveCount(3);
    await expect(rows.nth(1)).toHaveAttribute('data-state', 'failed', {
      timeout: 120000
    });
    await expect(
      results.getByTestId('gpu-env-sweep-results-counts')
    ).toHaveText('3 of 3 runs ended: 2 succeeded, 1 failed', {
      timeout: 120000
    });

    // Retry from the sweep's row in the sidebar, the results left open.
    await page.sidebar.openTab(PANEL_ID);
    const row = page.locator(
      `[data-testid="gpu-env-sweep"][data-id="${sweep.id}"]`
    );
    await row.locator('[data-action="menu"]').click();
    const retry = page.locator(
      '.lm-Menu.jp-GpuEnv-rowMenu .lm-Menu-item[data-command="jupyter-gpu-env:sweep-retry"]'
    );
    // It retries cancelled runs too, and says so (issue 38, item 5).
    await expect(retry).toContainText('Retry failed and cancelled runs');
    await retry.click();

    // The results follow: the run goes again, then succeeds, with its value.
    await expect(rows.nth(1)).not.toHaveAttribute('data-state', 'failed');
    await expect(rows.nth(1)).toHaveAttribute('data-state', 'succeeded', {
      timeout: 120000
    });
    await expect(
      results.locator(
        '[data-testid="gpu-env-sweep-row"] td[data-column="v:square"]'
      )
    ).toHaveText(['1', '4', '9']);
    await expect(
      results.getByTestId('gpu-env-sweep-results-counts')
    ).toHaveText('3 of 3 runs ended: 3 succeeded');
    await expect(results).toHaveAttribute('data-state', 'succeeded');
  });
});

test.describe('Rerun, Dask and pipelines in the palette', () => {
  const clusters: string[] = [];
  test.afterEach(async ({ page }) => {
    for (const id of clusters.splice(0)) {
      await page.request.post(`${API}/dask/clusters/${id}/cancel`);
    }
  });

  test('"rerun" finds Run a job again; scale, dashboard and cancel ask which', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(300000);
    const tag = `pd${test.info().retry}-${Date.now()}`;
    const done = await sendThroughApi<IJob>(page, `${tmpPath}/q.ipynb`, QUICK, {
      name: `${tag}-done`
    });
    // Two clusters of no worker (a scheduler each): the palette asks which.
    const started: IDaskCluster[] = [];
    for (const name of [`${tag}-a`, `${tag}-b`]) {
      const response = await page.request.post(`${API}/dask/clusters`, {
        data: { name, kernel: 'python3', backend: 'local', workers: 0 }
      });
      expect(response.status()).toBe(201);
      const cluster: IDaskCluster = await response.json();
      clusters.push(cluster.id);
      started.push(cluster);
    }
    await page.contents.uploadContent(SLOW, 'text', `${tmpPath}/slow.ipynb`);
    const response = await page.request.post(`${API}/pipelines`, {
      data: {
        name: `${tag}-pipeline`,
        nodes: [
          {
            id: 'slow',
            notebook_path: `${tmpPath}/slow.ipynb`,
            backend: 'local'
          }
        ]
      }
    });
    expect(response.status()).toBe(201);
    const pipeline: IPipeline = await response.json();
    for (const cluster of started) {
      await expect
        .poll(
          async () => {
            const now = await apiGet<IDaskCluster>(
              page.request,
              `dask/clusters/${cluster.id}`
            );
            return now.state === 'running' && !!now.dashboard;
          },
          { timeout: 120000 }
        )
        .toBe(true);
    }

    /** Choose the cluster `id` in the open "which cluster" dialog. */
    const chooseCluster = async (title: string, id: string) => {
      await expect(dialog(page)).toContainText(title);
      const list = dialog(page).locator('select');
      const labels = await list.locator('option').allTextContents();
      expect(labels.filter(label => label.includes(tag))).toHaveLength(2);
      await list.selectOption({ label: labels.find(l => l.includes(id))! });
      await dialogButton(page, 'Next').click();
    };

    await runFromPalette(page, 'Dask: scale…', {
      command: 'jupyter-gpu-env:dask-scale',
      category: CATEGORY
    });
    await chooseCluster('Scale a cluster', started[0].id);
    await expect(dialog(page)).toContainText(`Scale '${tag}-a'`);
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);

    await runFromPalette(page, 'Dask: open dashboard…', {
      command: 'jupyter-gpu-env:dask-dashboard',
      category: CATEGORY
    });
    await chooseCluster('Open a dashboard', started[1].id);
    await expect(currentTab(page, `Dask: ${tag}-b`)).toBeVisible();

    // Cancel a pipeline: the running ones offered, then the usual question.
    await expect
      .poll(
        async () =>
          (await apiGet<IPipeline>(page.request, `pipelines/${pipeline.id}`))
            .state,
        { timeout: 120000 }
      )
      .toMatch(/queued|running/);
    await runFromPalette(page, 'Cancel a pipeline…', {
      command: 'jupyter-gpu-env:pipeline-cancel',
      category: CATEGORY
    });
    await expect(dialog(page)).toContainText('Cancel which pipeline?');
    const pipelines = dialog(page).getByTestId('gpu-env-pick-pipeline');
    await pipelines.selectOption(pipeline.id);
    await dialogButton(page, 'Choose').click();
    await expect(dialog(page)).toContainText('Cancel pipeline?');
    await dialogButton(page, 'Cancel pipeline').click();
    await expect
      .poll(
        async () =>
          (await apiGet<IPipeline>(page.request, `pipelines/${pipeline.id}`))
            .state,
        { timeout: 60000 }
      )
      .toBe('cancelled');

    // The command line's word finds the command, which asks which job.
    await reaches(page, done.id, /succeeded/);
    await runFromPalette(page, 'rerun', {
      command: 'jupyter-gpu-env:job-run-again',
      category: CATEGORY
    });
    await expect(dialog(page)).toContainText('Run which job again?');
    await expect(option(picker(page, 'job'), done.id)).toHaveCount(1);
    await dialogButton(page, 'Cancel').click();
  });
});
