/**
 * "Send to batch" and the Jobs section against the real server: the local
 * backend runs the notebook with papermill in the python3 kernel. Every test
 * writes the notebook it needs through the contents API, so each runs alone.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';
import * as path from 'path';

import type { IJob, IJobList } from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  clickToastButton,
  dialog,
  dialogButton,
  notebook,
  openNotebook,
  runFromPalette,
  screenshotDialog,
  screenshotPath,
  sendButton,
  sendThroughApi,
  submitDialog,
  wideSidebar
} from './helpers';

const DOUBLE = notebook(
  [['parameters'], 'alpha = 1'],
  [[], 'print(alpha * 2)']
);

function jobRow(page: IJupyterLabPageFixture, name: string): Locator {
  return page.locator(`[data-testid="gpu-env-job"][data-name="${name}"]`);
}

async function listJobs(request: APIRequestContext): Promise<IJobList> {
  return apiGet(request, 'jobs');
}

async function jobNamed(
  request: APIRequestContext,
  name: string
): Promise<IJob | undefined> {
  return (await listJobs(request)).items.find(job => job.name === name);
}

/**
 * Submit the open dialog; answers the job it sent once the job has run
 * (while its notebook's folder still exists).
 */
async function submitAndRun(
  page: IJupyterLabPageFixture,
  name: string
): Promise<IJob | undefined> {
  await submitDialog(page);
  await expect
    .poll(async () => (await jobNamed(page.request, name))?.state, {
      timeout: 60000
    })
    .toBe('succeeded');
  return jobNamed(page.request, name);
}

test.describe('Send to batch', () => {
  wideSidebar(340);

  test('runs a notebook with a new parameter and opens its output', async ({
    page,
    tmpPath
  }) => {
    const name = 'double';
    await openNotebook(page, `${tmpPath}/${name}.ipynb`, DOUBLE);

    await expect(sendButton(page)).toBeVisible();
    await sendButton(page).click();

    // Prefilled from the notebook: its parameters cell and its kernel.
    const form = dialog(page).getByTestId('gpu-env-submit-form');
    const alpha = form.locator('[data-param="alpha"]');
    await expect(alpha).toHaveValue('1');
    await expect(form.getByTestId('gpu-env-submit-target')).toHaveValue(
      'kernel:python3'
    );
    await expect(form.getByTestId('gpu-env-submit-backend')).toHaveValue(
      'local'
    );
    await alpha.fill('21');
    await screenshotDialog(page, 'jobs-dialog.png');
    await submitDialog(page);

    // The confirmation leads to the job in the sidebar.
    const sent = page.locator('.jp-toast-message', {
      hasText: `Sent '${name}' to local`
    });
    await expect(sent).toBeVisible();
    await clickToastButton(page, sent, 'Open jobs');
    expect(await page.sidebar.isTabOpen(PANEL_ID)).toBe(true);

    const row = jobRow(page, name);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute('data-state', 'succeeded', {
      timeout: 90000
    });
    await expect(row).toContainText(/(\d+) of \1 cells/);
    await expect(row.getByRole('progressbar')).toBeVisible();
    await expect(page.getByTestId('gpu-env-jobs-usage')).toContainText(
      /This week: [<\d.]+ GPU-hours, [<\d.]+ CPU-hours, \d+ jobs?/
    );
    // The end is announced, with the output one click away.
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Job '${name}' succeeded`
      })
    ).toBeVisible();

    const job = await jobNamed(page.request, name);
    expect(job?.parameters).toEqual({ alpha: 21 });

    // The whole log, read chunk by chunk until the end.
    await row.locator('[data-action="log"]').click();
    const log = page.getByTestId('gpu-env-job-log');
    await expect(log).toHaveAttribute('data-state', 'ended', {
      timeout: 30000
    });
    await expect(log.locator('pre')).not.toBeEmpty();

    // The executed notebook opens in JupyterLab, with the new value applied.
    await row.locator('[data-action="output"]').click();
    const output = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden)');
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current', {
        hasText: path.basename(job?.output_path ?? 'output.ipynb')
      })
    ).toBeVisible();
    await expect(
      output.locator('.jp-OutputArea-output', { hasText: /^42\s*$/ })
    ).toBeVisible();
    await page.screenshot({ path: screenshotPath('jobs.png') });
  });

  test("says what is wrong as typed, then the server's refusal without field paths", async ({
    page,
    tmpPath
  }) => {
    const name = 'refused';
    await openNotebook(page, `${tmpPath}/${name}.ipynb`, DOUBLE);
    const before = (await listJobs(page.request)).total;

    // From the command palette this time (its item is enabled once the
    // notebook is the current widget).
    await runFromPalette(page, 'Send notebook to batch');
    const form = dialog(page).getByTestId('gpu-env-submit-form');
    await form.locator('[data-param="alpha"]').fill('5');
    const submit = dialogButton(page, 'Submit');

    // Each field says what is wrong as it is typed, in the server's words,
    // and Submit waits until it is fixed.
    const problemOf = (testid: string) =>
      form
        .locator('.jp-GpuEnv-field', { has: page.getByTestId(testid) })
        .locator('.jp-GpuEnv-fieldProblem');
    const cpus = form.getByTestId('gpu-env-submit-cpus');
    const memory = form.getByTestId('gpu-env-submit-memory');
    const time = form.getByTestId('gpu-env-submit-time-limit');
    await cpus.pressSequentially('abc');
    await expect(cpus).toHaveValue('abc');
    await expect(problemOf('gpu-env-submit-cpus')).toHaveText(
      'CPUs must be a whole number from 1 to 1024'
    );
    await expect(submit).toBeDisabled();
    await memory.pressSequentially('5 potatoes');
    await expect(problemOf('gpu-env-submit-memory')).toHaveText(
      "memory '5 potatoes' is not valid; write it like '512M', '4G' or " +
        "'1.5T' (binary units)"
    );
    await time.pressSequentially('soon');
    await expect(problemOf('gpu-env-submit-time-limit')).toContainText(
      "time limit 'soon' is not valid; write minutes ('90')"
    );
    await memory.fill('');
    await memory.pressSequentially('512M');
    await time.fill('');
    await time.pressSequentially('10');
    await expect(problemOf('gpu-env-submit-memory')).toBeHidden();
    await expect(problemOf('gpu-env-submit-time-limit')).toBeHidden();
    await expect(submit).toBeDisabled(); // CPUs still reads 'abc'

    // What only the server knows (this machine's CPUs) is its refusal,
    // named in words: no field path such as "resources.cpus".
    await cpus.fill('');
    await cpus.pressSequentially('1000');
    await expect(problemOf('gpu-env-submit-cpus')).toBeHidden();
    await submit.click();
    const error = form.getByTestId('gpu-env-submit-error');
    await expect(error).toContainText('offers at most');
    await expect(error).not.toHaveText(/\b[a-z_]+\.[a-z_]+\b/);
    await expect(dialog(page)).toBeVisible();
    await expect(cpus).toHaveClass(/jp-GpuEnv-inputError/);
    await expect(form.locator('[data-param="alpha"]')).toHaveValue('5');
    // Nothing was recorded for the refused request.
    expect((await listJobs(page.request)).total).toBe(before);

    // Corrected, the same dialog sends it.
    await cpus.fill('1');
    await expect(cpus).not.toHaveClass(/jp-GpuEnv-inputError/);
    const job = await submitAndRun(page, name);
    expect(job?.parameters).toEqual({ alpha: 5 });
    expect(job?.resources.cpus).toBe(1);
    expect(job?.resources.memory_bytes).toBe(512 * 1024 * 1024);

    // The next dialog starts from the resources last used.
    await sendButton(page).click();
    await expect(cpus).toHaveValue('1');
    await dialogButton(page, 'Cancel').click();
  });

  test("builds the parameters form from the server's reading", async ({
    page,
    tmpPath
  }) => {
    const name = 'kinds';
    await openNotebook(
      page,
      `${tmpPath}/${name}.ipynb`,
      notebook(
        [
          ['parameters'],
          [
            'alpha = 1  # how many rounds',
            'rate = 0.5',
            "optimizer = 'adam'",
            'verbose = False',
            'layers = [1, 2]',
            'seed = 2 * 3'
          ].join('\n')
        ],
        [[], 'print(alpha, rate, optimizer, verbose, layers, seed)']
      )
    );
    await sendButton(page).click();
    const params = dialog(page).getByTestId('gpu-env-submit-params');
    const field = (param: string) => params.locator(`[data-param="${param}"]`);
    await expect(field('alpha')).toHaveValue('1');
    await expect(field('alpha')).toHaveAttribute('inputmode', 'numeric');
    // The comment beside the assignment is the field's hint.
    await expect(params).toContainText('how many rounds');
    await expect(field('rate')).toHaveValue('0.5');
    await expect(field('optimizer')).toHaveValue('adam');
    await expect(field('verbose')).not.toBeChecked();
    // Other values are JSON; an expression is a hint, sent only if typed.
    await expect(field('layers')).toHaveValue('[1,2]');
    await expect(field('seed')).toHaveValue('');
    await expect(field('seed')).toHaveAttribute('placeholder', '2 * 3');

    await field('verbose').check();
    await field('layers').fill('[3, 4]');
    const job = await submitAndRun(page, name);
    expect(job?.parameters).toEqual({ verbose: true, layers: [3, 4] });
    // Gone again, so that the other tests' pictures stay as they were.
    const removed = await page.request.delete(`${API}/jobs/${job?.id}`);
    expect(removed.ok()).toBe(true);
  });

  test('says so when no cell is tagged parameters', async ({
    page,
    tmpPath
  }) => {
    await openNotebook(
      page,
      `${tmpPath}/untagged.ipynb`,
      notebook([[], 'alpha = 1'])
    );
    await sendButton(page).click();
    await expect(dialog(page).getByTestId('gpu-env-submit-params')).toHaveText(
      /No cell is tagged “parameters”/
    );
    await dialogButton(page, 'Cancel').click();
  });

  test('cancels and deletes a job from the Jobs section', async ({
    page,
    tmpPath
  }) => {
    const name = 'sleepy';
    // Long enough to be cancelled while it runs.
    await sendThroughApi<IJob>(
      page,
      `${tmpPath}/${name}.ipynb`,
      notebook(
        [['parameters'], 'seconds = 120'],
        [[], 'import time\ntime.sleep(seconds)']
      )
    );

    await page.sidebar.openTab(PANEL_ID);
    const row = jobRow(page, name);
    await expect(row).toHaveAttribute('data-state', 'running', {
      timeout: 60000
    });
    const elapsed = row.getByTestId('gpu-env-job-elapsed');
    const first = await elapsed.textContent();
    await expect(elapsed).not.toHaveText(first ?? '', { timeout: 5000 });
    await screenshotSection(page);

    await row.locator('[data-action="cancel"]').click();
    await dialogButton(page, 'Cancel job').click();
    await expect(row).toHaveAttribute('data-state', 'cancelled', {
      timeout: 30000
    });

    await row.locator('[data-action="delete"]').click();
    await dialogButton(page, 'Delete').click();
    await expect(row).toHaveCount(0);
    expect(await jobNamed(page.request, name)).toBeUndefined();
  });
});

/** The sidebar as far as its last section, while a job runs. */
async function screenshotSection(page: IJupyterLabPageFixture): Promise<void> {
  const section = page.locator('[data-section="jobs"]');
  await section.scrollIntoViewIfNeeded();
  await section.screenshot({
    path: screenshotPath('jobs-running.png')
  });
}
