/**
 * Kernels on the batch system against the real server and its local
 * backend: one registered from the palette's dialog shows its card in the
 * Launcher, a notebook started from the card runs a cell in it, and the
 * notebook's toolbar says it runs; the Jobs section lists it (its session
 * an "Interactive session") and removes it, ending its kernel. With the
 * local backend's one whole GPU held by a job, a GPU kernel registered from
 * an environment's menu waits in the queue: the toolbar says so and offers
 * "Stop waiting"; once the job holding the GPU is cancelled, the kernel
 * starts, and (its walltime ten minutes) the notebook is told once when its
 * walltime ends. "Stop waiting" cancels the waiting kernel's job.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';

import type {
  IBatchKernel,
  IBatchKernelList,
  IJob
} from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  clickToastButton,
  dialog,
  dialogButton,
  execute,
  notebook,
  runFromPalette,
  screenshotPath,
  sendThroughApi
} from './helpers';
import { DEMO, chooseRowAction, envRow } from './environments-helpers';

/** A kernel's job starts on the local backend in seconds; a loaded machine takes longer. */
const START_TIMEOUT = 90000;

/** The current notebook's batch kernel item in its toolbar. */
function batchStatus(page: IJupyterLabPageFixture): Locator {
  return page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) [data-testid="gpu-env-batch-status"]'
  );
}

async function batchKernelNamed(
  request: APIRequestContext,
  displayName: string
): Promise<IBatchKernel | undefined> {
  const list = await apiGet<IBatchKernelList>(request, 'batch-kernels');
  return list.items.find(kernel => kernel.display_name === displayName);
}

/** Remove every batch kernel, ending its kernels (what a test left). */
async function removeBatchKernels(request: APIRequestContext): Promise<void> {
  const list = await apiGet<IBatchKernelList>(request, 'batch-kernels');
  for (const kernel of list.items) {
    const response = await request.delete(
      `${API}/batch-kernels/${kernel.kernel_name}?shutdown_kernels=true`
    );
    expect(response.ok()).toBe(true);
  }
}

/** Send a notebook that sleeps on the local backend's whole GPU; answers it once it runs. */
async function holdTheGpu(
  page: IJupyterLabPageFixture,
  file: string
): Promise<IJob> {
  const job = await sendThroughApi<IJob>(
    page,
    file,
    notebook([[], 'import time\ntime.sleep(600)']),
    { name: 'holds-the-gpu', resources: { gpus: 1 } }
  );
  await expect
    .poll(
      async () => (await apiGet<IJob>(page.request, `jobs/${job.id}`)).state,
      {
        timeout: START_TIMEOUT
      }
    )
    .toBe('running');
  return job;
}

async function cancelJob(
  request: APIRequestContext,
  jobId: string
): Promise<void> {
  const response = await request.post(`${API}/jobs/${jobId}/cancel`);
  expect(response.ok()).toBe(true);
}

/** Register in the open dialog: backend local, the fields given, Register. */
async function register(
  page: IJupyterLabPageFixture,
  fields: { name: string; walltime: string; gpus?: string }
): Promise<void> {
  const form = dialog(page).getByTestId('gpu-env-batch-kernel-form');
  await form.getByTestId('gpu-env-submit-backend').selectOption('local');
  await form.getByTestId('gpu-env-submit-time-limit').fill(fields.walltime);
  if (fields.gpus) {
    await form.getByTestId('gpu-env-submit-gpus').fill(fields.gpus);
  }
  await form.getByTestId('gpu-env-batch-kernel-name').fill(fields.name);
  await dialogButton(page, 'Register', true).click();
  await expect(dialog(page)).toHaveCount(0);
}

test.describe('Kernels on the batch system', () => {
  test.beforeEach(async ({ page }) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await removeBatchKernels(page.request);
  });
  test.afterEach(async ({ page }) => {
    await removeBatchKernels(page.request);
  });

  test('registers one from the palette, runs a notebook with it from the Launcher, and removes it', async ({
    page
  }) => {
    test.setTimeout(4 * 60 * 1000);
    const name = `Galata batch ${Date.now()}`;
    await runFromPalette(page, 'New kernel on the batch system…', {
      command: 'jupyter-gpu-env:new-batch-kernel'
    });
    const form = dialog(page).getByTestId('gpu-env-batch-kernel-form');
    // From the palette, what it runs in is chosen here: an environment that
    // runs notebooks first; the demo environment.
    const target = form.getByTestId('gpu-env-batch-kernel-target');
    await expect(target).toHaveValue(/^environment:/);
    await target.selectOption(`environment:${DEMO}`);
    // A refusal keeps the dialog open with what was typed.
    await form.getByTestId('gpu-env-submit-backend').selectOption('local');
    await form.getByTestId('gpu-env-submit-cpus').fill('999');
    await form.getByTestId('gpu-env-batch-kernel-name').fill(name);
    await dialogButton(page, 'Register', true).click();
    const error = form.getByTestId('gpu-env-batch-kernel-error');
    await expect(error).toBeVisible();
    await expect(error).not.toBeEmpty();
    await expect(form.getByTestId('gpu-env-batch-kernel-name')).toHaveValue(
      name
    );
    expect(await batchKernelNamed(page.request, name)).toBeUndefined();
    await form.getByTestId('gpu-env-submit-cpus').fill('');
    // An opportunistic kernel is not resumed as a notebook job is: it says so.
    await expect(
      form
        .getByTestId('gpu-env-submit-priority')
        .getByTestId('gpu-env-priority-description')
        .last()
    ).toContainText('the kernel then ends');
    await dialog(page)
      .locator('.jp-Dialog-content')
      .screenshot({ path: screenshotPath('batch-kernel-dialog.png') });
    await register(page, { name, walltime: '0:30:00' });

    const toast = page.locator('.jp-toast-message', {
      hasText: `'${name}' is in the Launcher`
    });
    await expect(toast).toBeVisible();
    const made = await batchKernelNamed(page.request, name);
    expect(made?.backend).toBe('local');
    expect(made?.environment).toBe(DEMO);
    expect(made?.resources.time_limit_seconds).toBe(1800);

    // Its card, at once: no reload.
    await execute(page, 'launcher:create');
    const card = page.locator('.jp-Launcher:visible .jp-LauncherCard', {
      hasText: name
    });
    await expect(card.first()).toBeVisible();
    await card.first().click();

    // The notebook's kernel runs as a job; its toolbar says where.
    const status = batchStatus(page);
    await expect(status).toHaveAttribute('data-state', 'running', {
      timeout: START_TIMEOUT
    });
    await expect(status.getByTestId('gpu-env-batch-status-words')).toHaveText(
      /^Running( on \S+)? · (29|30) min left$/
    );
    await expect(status.locator('[data-action="stop-waiting"]')).toHaveCount(0);
    await page.notebook.setCell(
      0,
      'code',
      'import sys\nprint("hello from", sys.prefix.split("/")[-1])'
    );
    await page.notebook.runCell(0);
    await expect(
      page.locator(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-OutputArea-output'
      )
    ).toHaveText(`hello from ${DEMO}`, { timeout: 60000 });

    // Listed in the Jobs section, its session an interactive one.
    await page.sidebar.openTab(PANEL_ID);
    const row = page.locator(
      `[data-testid="gpu-env-batch-kernel"][data-name="${made?.kernel_name}"]`
    );
    await row.scrollIntoViewIfNeeded();
    await expect(row.getByTestId('gpu-env-batch-kernel-where')).toContainText(
      '1 running'
    );
    await expect(row.getByTestId('gpu-env-batch-kernel-session')).toContainText(
      'Running'
    );
    await page
      .getByTestId('gpu-env-batch-kernels')
      .screenshot({ path: screenshotPath('batch-kernels-group.png') });
    const session = page.locator('[data-testid="gpu-env-job"]', {
      has: page.getByTestId('gpu-env-job-kind')
    });
    await expect(session.first()).toContainText('Interactive session');
    await expect(session.first().locator('[data-action="output"]')).toHaveCount(
      0
    );

    // Removed from its menu: its running kernel is ended on the user's word.
    await row.locator('[data-action="menu"]').click();
    await page
      .locator('.jp-GpuEnv-rowMenu')
      .getByRole('menuitem', { name: 'Remove…' })
      .click();
    await dialogButton(page, 'Remove', true).click();
    await expect(
      dialog(page).getByTestId('gpu-env-kernels-in-use')
    ).toBeVisible();
    await dialogButton(page, 'Shut down 1 kernel and delete').click();
    await expect(row).toHaveCount(0);
    await expect(card).toHaveCount(0);
    expect(await batchKernelNamed(page.request, name)).toBeUndefined();
  });

  test('a kernel that waits for the GPU says so in the toolbar, then starts', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(4 * 60 * 1000);
    const blocker = await holdTheGpu(page, `${tmpPath}/hold.ipynb`);
    const name = `Galata GPU ${Date.now()}`;
    try {
      // From the environment's menu: the environment filled in.
      await page.sidebar.openTab(PANEL_ID);
      await chooseRowAction(envRow(page, DEMO), 'new-batch-kernel');
      await expect(
        dialog(page).getByTestId('gpu-env-batch-kernel-target')
      ).toHaveValue(`environment:${DEMO}`);
      // Ten minutes: the walltime notice is due as soon as it runs.
      await register(page, { name, walltime: '10', gpus: '1' });

      // "New notebook" on the notice: the notebook waits for its kernel.
      const toast = page.locator('.jp-toast-message', {
        hasText: `'${name}' is in the Launcher`
      });
      await clickToastButton(page, toast, 'New notebook');
      const status = batchStatus(page);
      await expect(status).toHaveAttribute('data-state', 'waiting', {
        timeout: START_TIMEOUT
      });
      await expect(status.getByTestId('gpu-env-batch-status-words')).toHaveText(
        "Waiting in queue 'local', 1st"
      );
      await expect(
        status.locator('[data-action="stop-waiting"]')
      ).toBeVisible();
      await page
        .locator(
          '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar'
        )
        .screenshot({ path: screenshotPath('batch-kernel-waiting.png') });

      // The GPU freed, the kernel starts.
      await cancelJob(page.request, blocker.id);
      await expect(status).toHaveAttribute('data-state', 'running', {
        timeout: START_TIMEOUT
      });
      await expect(status.locator('[data-action="stop-waiting"]')).toHaveCount(
        0
      );
      const notice = page.locator('.jp-toast-message', {
        hasText:
          /^The batch kernel of Untitled\d*\.ipynb ends at \d\d:\d\d \(its walltime\); save your work\.$/
      });
      await expect(notice).toHaveCount(1);
      await page.notebook.setCell(0, 'code', 'print(6 * 7)');
      await page.notebook.runCell(0);
      await expect(
        page.locator(
          '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-OutputArea-output'
        )
      ).toHaveText('42', { timeout: 60000 });
    } finally {
      await page.request.post(`${API}/jobs/${blocker.id}/cancel`);
    }
  });

  test('"Stop waiting" cancels the job of a kernel that waits', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(4 * 60 * 1000);
    const blocker = await holdTheGpu(page, `${tmpPath}/hold.ipynb`);
    try {
      const response = await page.request.post(`${API}/batch-kernels`, {
        data: {
          environment: DEMO,
          backend: 'local',
          resources: { gpus: 1 },
          walltime: 20,
          display_name: `Galata stop ${Date.now()}`
        }
      });
      expect(response.status()).toBe(201);
      const made: IBatchKernel = await response.json();
      // Registered behind the Lab's back: it reads the kernelspecs again, as
      // the dialog has it do.
      await page.evaluate(() =>
        window.jupyterapp.serviceManager.kernelspecs.refreshSpecs()
      );
      await execute(page, 'notebook:create-new', {
        kernelName: made.kernel_name
      });
      const status = batchStatus(page);
      await expect(status).toHaveAttribute('data-state', 'waiting', {
        timeout: START_TIMEOUT
      });
      await status.locator('[data-action="stop-waiting"]').click();

      // Its job is cancelled; JupyterLab says the kernel did not start.
      await expect(status).toHaveAttribute('data-state', 'ended', {
        timeout: START_TIMEOUT
      });
      await expect(
        status.getByTestId('gpu-env-batch-status-words')
      ).toContainText('Ended');
      // The toolbar's session: its kernel id (sessions that ended a little
      // earlier under the same kernelspec name are listed too).
      const kernelId = await status.getAttribute('data-kernel');
      const kernel = await apiGet<IBatchKernel>(
        page.request,
        `batch-kernels/${made.kernel_name}`
      );
      const shown = kernel.sessions.find(s => s.kernel_id === kernelId);
      expect(shown?.state).toBe('ended');
      expect(shown?.reason).toBe('cancelled');
      const jobId = shown?.job_id;
      expect(jobId).toBeTruthy();
      expect((await apiGet<IJob>(page.request, `jobs/${jobId}`)).state).toBe(
        'cancelled'
      );
      await expect(dialog(page)).toContainText('Error Starting Kernel', {
        timeout: START_TIMEOUT
      });
      await dialog(page).getByRole('button').last().click();
    } finally {
      await page.request.post(`${API}/jobs/${blocker.id}/cancel`);
    }
  });
});
