/**
 * "Run again…" against the real server (local backend, papermill): from a
 * finished job's row and from a sweep's results table, the send dialog
 * filled with that run's values from its snapshot, a value changed and
 * sent once however often Submit is clicked, the new run running with it;
 * a run sent again from a sweep is a new run of that sweep, in its results
 * and its CSV. And the sweep tells the truth: one run cancelled of three
 * leaves it succeeded with its counts said, and a queued run shows no
 * clock. At JupyterLab's default sidebar width; the last test in the dark
 * theme.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';

import type { IJob, IJobList, ISweep } from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  dialog,
  dialogButton,
  execute,
  notebook,
  screenshotDialog,
  sendThroughApi
} from './helpers';

const SQUARES = notebook(
  [['parameters'], 'alpha = 1'],
  [['results'], "{'square': alpha ** 2}"]
);

async function jobsNamed(
  request: APIRequestContext,
  name: string
): Promise<IJob[]> {
  const list = await apiGet<IJobList>(request, 'jobs?limit=200');
  return list.items.filter(job => job.name === name);
}

/** The cells of one column of the results table, top to bottom. */
function column(results: Locator, key: string): Locator {
  return results.locator(
    `[data-testid="gpu-env-sweep-row"] td[data-column="${key}"]`
  );
}

/** The open "Run again" dialog's form. */
function rerunForm(page: IJupyterLabPageFixture): Locator {
  return dialog(page).getByTestId('gpu-env-submit-form');
}

test.describe('Run again', () => {
  test('a finished job runs again from its row with a changed value, sent once', async ({
    page,
    tmpPath
  }) => {
    const name = `again-${test.info().retry}`;
    const file = `${tmpPath}/again.ipynb`;
    const job = await sendThroughApi<IJob>(page, file, SQUARES, {
      name,
      parameters: { alpha: 2 },
      resources: { cpus: 1 }
    });
    // The file changes after the job was sent: the run again is the
    // snapshot's, with the snapshot's parameters.
    await page.contents.uploadContent(
      notebook([['parameters'], 'beta = 1'], [[], 'print(beta)']),
      'text',
      file
    );

    await page.sidebar.openTab(PANEL_ID);
    const row = page.locator(
      `[data-testid="gpu-env-job"][data-id="${job.id}"]`
    );
    await expect(row).toHaveAttribute('data-state', 'succeeded', {
      timeout: 120000
    });
    await row.locator('[data-action="run-again"]').click();

    const form = rerunForm(page);
    await expect(form).toHaveAttribute('data-rerun-of', job.id);
    await expect(form).toContainText('not the file as it is now');
    await expect(form.locator('[data-param="alpha"]')).toHaveValue('2');
    await expect(form.locator('[data-param="beta"]')).toHaveCount(0);
    await expect(form.getByTestId('gpu-env-submit-cpus')).toHaveValue('1');
    await expect(form.getByTestId('gpu-env-submit-backend')).toHaveValue(
      'local'
    );
    // One run: no sweep mode.
    await expect(form.getByTestId('gpu-env-submit-sweep')).toHaveCount(0);
    await form.locator('[data-param="alpha"]').fill('5');
    // Issue 38, item 6: the new job is named by default after what changed.
    const renamed = `${name} alpha=5`;
    await expect(form.getByTestId('gpu-env-submit-name')).toHaveAttribute(
      'placeholder',
      renamed
    );
    await screenshotDialog(page, 'run-again-dialog.png');

    // A double click sends once: Submit is off while the request is out.
    await dialogButton(page, 'Submit').dblclick();
    await expect(dialog(page)).toHaveCount(0);
    await expect(
      page.locator('.jp-toast-message', { hasText: `Sent '${renamed}' again` })
    ).toBeVisible();
    await expect
      .poll(async () => (await jobsNamed(page.request, renamed)).length)
      .toBe(1);
    const again = (await jobsNamed(page.request, renamed))[0];
    expect(again?.parameters).toEqual({ alpha: 5 });
    expect(again?.resources.cpus).toBe(1);
    const newRow = page.locator(
      `[data-testid="gpu-env-job"][data-id="${again?.id}"]`
    );
    await expect(newRow).toHaveAttribute('data-state', 'succeeded', {
      timeout: 120000
    });
    await expect(newRow.getByTestId('gpu-env-job-params')).toHaveText(
      'alpha=5'
    );
    // Still one each: the second click of the double click sent nothing more.
    expect(await jobsNamed(page.request, renamed)).toHaveLength(1);
    expect(await jobsNamed(page.request, name)).toHaveLength(1);
  });

  test('a run sent again from the results table joins its sweep', async ({
    page,
    tmpPath
  }) => {
    const name = `rejoin-${test.info().retry}`;
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/rejoin.ipynb`,
      SQUARES,
      { name, sweep: { alpha: [1, 2] } }
    );
    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    const results = page.getByTestId('gpu-env-sweep-results');
    await expect(results).toHaveAttribute('data-state', 'succeeded', {
      timeout: 120000
    });
    await expect(column(results, 'v:square')).toHaveText(['1', '4']);

    // A double click on ▶ opens one dialog, filled from that run.
    const second = results.getByTestId('gpu-env-sweep-row').nth(1);
    await second.locator('[data-action="rerun"]').dblclick();
    await expect(dialog(page)).toHaveCount(1);
    const form = rerunForm(page);
    await expect(form.locator('[data-param="alpha"]')).toHaveValue('2');
    await form.locator('[data-param="alpha"]').fill('7');
    await dialogButton(page, 'Submit').click();
    await expect(dialog(page)).toHaveCount(0);
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Sent '${name} [alpha=7]' again as a new run of its sweep`
      })
    ).toBeVisible();

    // The new run is the sweep's third, numbered after its runs, in the
    // table (without a refresh) and in the CSV alike.
    const rows = results.getByTestId('gpu-env-sweep-row');
    await expect(rows).toHaveCount(3);
    await expect(rows.locator('.jp-GpuEnv-sweepIndex')).toHaveText([
      '1',
      '2',
      '3'
    ]);
    await expect(column(results, 'p:alpha')).toHaveText(['1', '2', '7']);
    await expect(column(results, 'v:square')).toHaveText(['1', '4', '49'], {
      timeout: 120000
    });
    const csv = await page.request.get(
      `${API}/sweeps/${sweep.id}/results?format=csv`
    );
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines.slice(1).map(line => line.split(',').slice(0, 3))).toEqual([
      ['1', '1', '1'],
      ['2', '2', '4'],
      ['3', '7', '49']
    ]);
    // The run's values show as its cells end; its record says succeeded once its runner has ended.
    await expect
      .poll(
        async () => {
          const after = await apiGet<ISweep>(
            page.request,
            `sweeps/${sweep.id}`
          );
          return [after.size, after.counts.succeeded];
        },
        { timeout: 60000 }
      )
      .toEqual([3, 3]);
  });

  test('a sweep with one run cancelled says how it ended; a queued run shows no clock', async ({
    page,
    tmpPath
  }) => {
    await page.theme.setDarkTheme();
    const name = `truth-${test.info().retry}`;
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/truth.ipynb`,
      notebook(
        [['parameters'], 'alpha = 1'],
        [[], 'import time\ntime.sleep(120 if alpha == 1 else 0)'],
        [['results'], "{'alpha': alpha * 10}"]
      ),
      { name, sweep: { alpha: [1, 2, 3] }, max_concurrent: 1 }
    );
    await page.sidebar.openTab(PANEL_ID);
    const row = page.locator(
      `[data-testid="gpu-env-sweep"][data-id="${sweep.id}"]`
    );
    await row.locator('.jp-GpuEnv-sweepRunsToggle').click();
    const runs = row
      .getByTestId('gpu-env-sweep-runs')
      .getByTestId('gpu-env-job');
    await expect(runs).toHaveCount(3);
    const first = runs.nth(0);
    await expect(first).toHaveAttribute('data-state', 'running', {
      timeout: 60000
    });
    // One at a time: the others wait, and show no clock while they do.
    for (const queued of [runs.nth(1), runs.nth(2)]) {
      await expect(queued).toHaveAttribute('data-state', 'queued');
      await expect(queued.getByTestId('gpu-env-job-elapsed')).toHaveCount(0);
    }
    await expect(first.getByTestId('gpu-env-job-elapsed')).toBeVisible();

    // One run cancelled: the others go on and succeed.
    await first.locator('[data-action="cancel"]').click();
    await dialogButton(page, 'Cancel job').click();
    await expect(row).toHaveAttribute('data-ended', '3', { timeout: 120000 });
    await expect(row).toHaveAttribute('data-state', 'succeeded');
    await expect(row.getByTestId('gpu-env-sweep-counts')).toHaveText(
      '2 ✓ · 1 cancelled'
    );

    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    const results = page.getByTestId('gpu-env-sweep-results');
    await expect(results).toHaveAttribute('data-state', 'succeeded');
    await expect(
      results.getByTestId('gpu-env-sweep-results-counts')
    ).toHaveText('3 of 3 runs ended: 2 succeeded, 1 cancelled');
    // The recorded value named like the parameter is told apart.
    await expect(results.locator('th[data-column="v:alpha"]')).toContainText(
      'value: alpha'
    );
    await expect(results.locator('th[data-column="p:alpha"]')).toHaveText(
      'alpha'
    );
    await expect(
      results.getByTestId('gpu-env-sweep-chart-y').locator('option')
    ).toHaveText(['value: alpha']);
    const csv = await page.request.get(
      `${API}/sweeps/${sweep.id}/results?format=csv`
    );
    expect((await csv.text()).split(/\r?\n/)[0]).toMatch(
      /^run,alpha,value: alpha,state,/
    );
  });
});
