/**
 * Parameter sweeps against the real server: several values per parameter
 * in the "Send to batch" dialog, the sweep as one row of the Jobs section,
 * and its results (table, chart, CSV, "Run with these parameters"). The
 * local backend runs each run with papermill in the python3 kernel.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as fs from 'fs';

import type { ISweep } from '../../labextension/src/api/types';
import {
  PANEL_ID,
  apiGet,
  clickToastButton,
  dialog,
  dialogButton,
  execute,
  notebook,
  openNotebook,
  screenshotDialog,
  screenshotPath,
  sendButton,
  submitDialog,
  wideSidebar
} from './helpers';

const SQUARES = notebook(
  [['parameters'], 'alpha = 1'],
  [['results'], "{'square': alpha ** 2}"]
);

/** Open the dialog of the current notebook in sweep mode. */
async function openSweepDialog(page: IJupyterLabPageFixture): Promise<Locator> {
  await sendButton(page).click();
  const form = dialog(page).getByTestId('gpu-env-submit-form');
  await form.getByTestId('gpu-env-submit-sweep').check();
  return form;
}

function values(form: Locator, param: string): Locator {
  return form.locator(`[data-param-values="${param}"]`);
}

/** The cells of one column of the results table, top to bottom. */
function column(results: Locator, key: string): Locator {
  return results.locator(
    `[data-testid="gpu-env-sweep-row"] td[data-column="${key}"]`
  );
}

test.describe('Sweeps', () => {
  wideSidebar(360);

  test('counts the runs of lists and ranges as they are typed', async ({
    page,
    tmpPath
  }) => {
    await openNotebook(
      page,
      `${tmpPath}/counts.ipynb`,
      notebook(
        [
          ['parameters'],
          [
            'alpha = 1',
            'rate = 0.5',
            "optimizer = 'adam'",
            'verbose = False',
            'layers = [1, 2]'
          ].join('\n')
        ],
        [[], 'print(alpha, rate, optimizer, verbose, layers)']
      )
    );
    const form = await openSweepDialog(page);
    const runs = form.getByTestId('gpu-env-submit-runs');
    const atOnce = form.getByTestId('gpu-env-submit-max-concurrent');
    // The fields start from the single values.
    await expect(values(form, 'alpha')).toHaveValue('1');
    await expect(values(form, 'rate')).toHaveValue('0.5');
    await expect(runs).toHaveText('1 run');
    await expect(atOnce).toBeHidden();

    // A range of floats: the stop is included when a step lands on it.
    await values(form, 'rate').fill('0:1:0.5');
    await expect(runs).toHaveText('3 runs');
    await expect(atOnce).toBeVisible();

    // A whole number parameter refuses a float range.
    await values(form, 'alpha').fill('0:1:0.5');
    await expect(form).toContainText('0.5 is not a whole number');
    await expect(dialogButton(page, 'Submit')).toBeDisabled();
    await values(form, 'alpha').fill('1, 2');
    await expect(runs).toHaveText('6 runs');

    // JSON that parses whole is one value; a boolean can take both.
    await values(form, 'layers').fill('[3, 4]');
    await expect(runs).toHaveText('6 runs');
    await form.locator('[data-param-values="verbose"]').selectOption('both');
    await expect(runs).toHaveText('12 runs');
    await atOnce.fill('2');
    await expect(runs).toHaveText('12 runs, 2 at a time');

    // Beyond the usual limit: said, not refused here (the server decides).
    await values(form, 'alpha').fill('1:200');
    await expect(runs).toContainText('1,200 runs');
    await expect(runs).toHaveAttribute('data-level', 'warn');

    // Back to one value each: the typed inputs again.
    await form.getByTestId('gpu-env-submit-sweep').uncheck();
    await expect(runs).toBeHidden();
    await expect(form.locator('[data-param="alpha"]')).toHaveAttribute(
      'inputmode',
      'numeric'
    );
    await dialogButton(page, 'Cancel').click();
  });

  test('runs a sweep, follows it as one row and opens its results', async ({
    page,
    tmpPath
  }) => {
    const name = `squares-${test.info().retry}`;
    await openNotebook(page, `${tmpPath}/squares.ipynb`, SQUARES);
    const form = await openSweepDialog(page);
    await values(form, 'alpha').fill('1,2,3');
    await expect(form.getByTestId('gpu-env-submit-runs')).toHaveText('3 runs');
    await form.getByTestId('gpu-env-submit-name').fill(name);
    await screenshotDialog(page, 'sweeps-dialog.png');
    await submitDialog(page);

    const sent = page.locator('.jp-toast-message', {
      hasText: `Sent the sweep '${name}' (3 runs) to local`
    });
    await expect(sent).toBeVisible();
    await clickToastButton(page, sent, 'Open jobs');
    expect(await page.sidebar.isTabOpen(PANEL_ID)).toBe(true);

    // One row for the sweep; its runs are not listed beside it.
    const list = page.getByTestId('gpu-env-job-list');
    const row = list.locator(
      `> [data-testid="gpu-env-sweep"][data-name="${name}"]`
    );
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute('data-size', '3');
    await expect(row).toHaveAttribute('data-ended', '3', { timeout: 120000 });
    await expect(row).toHaveAttribute('data-state', 'succeeded');
    await expect(row.getByTestId('gpu-env-sweep-ended')).toHaveText(
      '3 of 3 runs'
    );
    await expect(row.getByTestId('gpu-env-sweep-counts')).toHaveText('3 ✓');
    await expect(
      list.locator(`> [data-testid="gpu-env-job"][data-name^="${name} ["]`)
    ).toHaveCount(0);

    // Expanded, it lists its runs with their parameters.
    await row.locator('.jp-GpuEnv-sweepRunsToggle').click();
    const runs = row
      .getByTestId('gpu-env-sweep-runs')
      .getByTestId('gpu-env-job');
    await expect(runs).toHaveCount(3);
    await expect(runs.getByTestId('gpu-env-job-params')).toHaveText([
      'alpha=1',
      'alpha=2',
      'alpha=3'
    ]);

    await row.screenshot({
      path: screenshotPath('sweeps-row.png')
    });

    // Its menu: nothing to cancel or retry once every run succeeded.
    await row.locator('[data-action="menu"]').click();
    const menu = page.locator('.lm-Menu.jp-GpuEnv-rowMenu');
    const item = (command: string) =>
      menu.locator(`.lm-Menu-item[data-command="jupyter-gpu-env:${command}"]`);
    await expect(item('sweep-results')).toBeVisible();
    await expect(item('sweep-cancel')).toBeHidden();
    await expect(item('sweep-retry')).toBeHidden();
    await item('sweep-results').click();

    // The results: a row per run, the recorded value beside the parameter.
    const results = page.getByTestId('gpu-env-sweep-results');
    await expect(results).toBeVisible();
    await expect(results.getByTestId('gpu-env-sweep-row')).toHaveCount(3);
    await expect(column(results, 'p:alpha')).toHaveText(['1', '2', '3']);
    await expect(column(results, 'v:square')).toHaveText(['1', '4', '9']);
    await expect(
      results.getByTestId('gpu-env-sweep-chart').locator('circle')
    ).toHaveCount(3);
    // Each run's GPU energy is a column; the test server has no GPU, so none
    // was measured, and the site set no carbon intensity or prices: no CO2e
    // or cost columns.
    await expect(results.locator('th[data-column="energy"]')).toHaveText(
      /^energy/
    );
    await expect(column(results, 'energy')).toHaveText(['', '', '']);
    await expect(column(results, 'energy').first()).toHaveAttribute(
      'title',
      'Not measured'
    );
    await expect(results.locator('th[data-column="co2e"]')).toHaveCount(0);
    await expect(results.locator('th[data-column="cost"]')).toHaveCount(0);

    // Sorted by a click on the header, descending with a second one.
    const header = results.locator('th[data-column="v:square"]');
    await header.getByRole('button').click();
    await expect(header).toHaveAttribute('aria-sort', 'ascending');
    await header.getByRole('button').click();
    await expect(header).toHaveAttribute('aria-sort', 'descending');
    await expect(column(results, 'v:square')).toHaveText(['9', '4', '1']);
    await page
      .locator('.jp-GpuEnv-sweepResultsWidget')
      .screenshot({ path: screenshotPath('sweeps-results.png') });

    // The table as CSV, through the browser's download.
    const csv = page.getByTestId('gpu-env-sweep-csv');
    await expect(csv).toBeVisible();
    const sweep = await apiGet<ISweep>(
      page.request,
      `sweeps/${await row.getAttribute('data-id')}`
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      csv.click()
    ]);
    // Named after the sweep, as the server names it (issue 38, item 8).
    const stem = sweep.name
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-._]+|[-._]+$/g, '')
      .toLowerCase();
    expect(download.suggestedFilename()).toBe(`${stem}-${sweep.id}.csv`);
    const text = fs.readFileSync((await download.path()) ?? '', 'utf-8');
    expect(text).toContain('square');
    expect(text.trim().split(/\r?\n/)).toHaveLength(4);
    expect(text.split(/\r?\n/)[0]).toContain(
      'state,duration_seconds,gpu_energy_kwh,job_id'
    );

    // The first row (alpha=3 now) sent again: the dialog, filled from it;
    // the new run joins the sweep (its own tests are in run-again.spec.ts).
    await results
      .getByTestId('gpu-env-sweep-row')
      .first()
      .locator('[data-action="rerun"]')
      .click();
    await expect(dialog(page).locator('[data-param="alpha"]')).toHaveValue('3');
    await submitDialog(page);
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Sent '${name} [alpha=3]' again as a new run of its sweep`
      })
    ).toBeVisible();
    await expect(results.getByTestId('gpu-env-sweep-row')).toHaveCount(4);

    // The palette's command opens the same view, given the sweep's id.
    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    await expect(page.getByTestId('gpu-env-sweep-results')).toHaveCount(1);
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current', {
        hasText: `Results: ${name}`
      })
    ).toBeVisible();
  });
});
