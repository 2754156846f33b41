/**
 * The Dask section against the real server, at the default sidebar width:
 * a cluster of one worker started with the local backend from the "New
 * cluster…" dialog (its environment the notebook's kernel), scaled to two,
 * a client inserted into the notebook and run, the dashboard in a tab, and
 * the cluster shut down. The local backend runs real Dask schedulers and
 * workers with the python3 kernel's Python, which has `distributed`. An
 * environment without it is offered its packages flow at once, and the
 * dialog comes back with what was typed.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type {
  IDaskCluster,
  IDaskClusterList,
  IEnvironmentDetail
} from '../../labextension/src/api/types';
import {
  PANEL_ID,
  apiGet,
  dialog,
  dialogButton,
  notebook,
  openNotebook,
  screenshotPath
} from './helpers';
import { ensureClone, envRow, removeEnvironment } from './environments-helpers';

/** A clone of the demo environment, which has no `distributed`. */
const BARE = 'ui-dask-bare';

/** Workers join in seconds here; a loaded machine may take longer. */
const WORKERS_TIMEOUT = 120000;

function clusterRow(page: IJupyterLabPageFixture, name: string): Locator {
  return page.locator(
    `[data-testid="gpu-env-dask-cluster"][data-name="${name}"]`
  );
}

/** Pick `item` in the "⋯" menu of `row`. */
async function fromMenu(
  page: IJupyterLabPageFixture,
  row: Locator,
  item: string
): Promise<void> {
  await row.locator('[data-action="menu"]').click();
  await page
    .locator('.jp-GpuEnv-rowMenu')
    .getByRole('menuitem', { name: item })
    .click();
}

async function clusterNamed(
  page: IJupyterLabPageFixture,
  name: string
): Promise<IDaskCluster | undefined> {
  const list = await apiGet<IDaskClusterList>(page.request, 'dask/clusters');
  return list.items.find(cluster => cluster.name === name);
}

test.describe('Dask', () => {
  test('starts, scales, connects, shows and shuts down a local cluster', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(6 * 60 * 1000);
    const name = `galata-${Date.now()}`;
    await openNotebook(
      page,
      `${tmpPath}/dask.ipynb`,
      notebook([[], 'print("the analysis")'])
    );
    await page.sidebar.openTab(PANEL_ID);
    const section = page.locator('[data-section="dask"]');
    await section.scrollIntoViewIfNeeded();
    await section.locator('[data-action="new-cluster"]').click();

    // The dialog runs the notebook's kernel, one worker, on a backend.
    const form = dialog(page).locator('.jp-GpuEnv-daskForm');
    await expect(form.getByTestId('gpu-env-dask-target')).toHaveValue(
      'kernel:python3'
    );
    await expect(form.getByTestId('gpu-env-dask-workers')).toHaveValue('1');
    await form.getByTestId('gpu-env-submit-backend').selectOption('local');
    await form.getByTestId('gpu-env-dask-name').fill(name);
    await dialog(page)
      .locator('.jp-Dialog-content')
      .screenshot({ path: screenshotPath('dask-new-cluster.png') });
    await dialogButton(page, 'Start').click();
    await expect(dialog(page)).toHaveCount(0);

    const row = clusterRow(page, name);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute('data-state', 'running', {
      timeout: WORKERS_TIMEOUT
    });
    await expect(row).toHaveAttribute('data-running', '1', {
      timeout: WORKERS_TIMEOUT
    });
    await expect(row.getByTestId('gpu-env-dask-workers')).toHaveText(
      '1 running'
    );
    // how it runs on its backend: here processes (on SLURM, "one allocation")
    await expect(row).toContainText('local · processes on this machine');
    const started = await clusterNamed(page, name);
    expect(started?.backend).toBe('local');
    expect(started?.kernel).toBe('python3');

    // Scale to two workers.
    await fromMenu(page, row, 'Scale…');
    await dialog(page).getByTestId('gpu-env-dask-workers').fill('2');
    await dialogButton(page, 'Scale').click();
    await expect(dialog(page)).toHaveCount(0);
    await expect(row).toHaveAttribute('data-running', '2', {
      timeout: WORKERS_TIMEOUT
    });
    await expect(row.getByTestId('gpu-env-dask-workers')).toHaveText(
      '2 running'
    );
    await section.screenshot({ path: screenshotPath('dask-section.png') });

    // A client at the top of the notebook, run: the kernel connects over the
    // cluster's mutual TLS (the kernel's environment has this package).
    const running = await clusterNamed(page, name);
    const address = running?.scheduler_address;
    expect(address).toMatch(/^tls:\/\/127\.0\.0\.1:/);
    await fromMenu(page, row, 'Insert client into notebook');
    const panel = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const first = panel.locator('.jp-Cell').first();
    await expect(first.locator('.jp-InputArea')).toContainText(
      `client = connect('${running?.id}')`
    );
    await expect(panel.locator('.jp-Cell')).toHaveCount(2);
    await page.notebook.runCell(0);
    const output = first.locator('.jp-OutputArea-output');
    await expect(output).toContainText('Client', { timeout: 60000 });
    await expect(output).toContainText(address ?? '');
    await expect(output).not.toContainText('Error');

    // The dashboard in a tab: the iframe loads the status page.
    await row.locator('[data-action="dashboard"]').click();
    const tab = page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
      hasText: `Dask: ${name}`
    });
    await expect(tab).toBeVisible();
    const frameNode = page.locator('.jp-GpuEnv-daskDashboard iframe');
    await expect(frameNode).toHaveAttribute('src', /gpu-env\/dask\/.+\/status/);
    const frame = await (await frameNode.elementHandle())?.contentFrame();
    expect(frame).toBeTruthy();
    await expect
      .poll(async () => (await frame?.title()) ?? '', { timeout: 60000 })
      .toMatch(/Status/i);
    await expect(frame!.locator('body')).not.toBeEmpty();

    // Shut down: the row says stopped, and so does the server.
    await fromMenu(page, row, 'Shut down…');
    await dialogButton(page, 'Shut down').click();
    await expect(row).toHaveAttribute('data-state', 'stopped', {
      timeout: WORKERS_TIMEOUT
    });
    await expect(row.locator('[data-action="dashboard"]')).toHaveCount(0);
    await expect(tab).toHaveCount(0);
    expect((await clusterNamed(page, name))?.state).toBe('stopped');
  });

  test('adding the missing packages opens the packages flow at once and comes back', async ({
    page
  }) => {
    test.setTimeout(4 * 60 * 1000);
    await ensureClone(page.request, BARE);
    await page.sidebar.openTab(PANEL_ID);
    await expect(envRow(page, BARE)).toBeVisible();
    const section = page.locator('[data-section="dask"]');
    await section.scrollIntoViewIfNeeded();
    await section.locator('[data-action="new-cluster"]').click();

    const daskForm = dialog(page).locator('.jp-GpuEnv-daskForm');
    const start = async (): Promise<Locator> => {
      await dialogButton(page, 'Start').click();
      await expect(daskForm.getByTestId('gpu-env-dask-error')).toContainText(
        "does not have the 'distributed' package"
      );
      return daskForm.getByTestId('gpu-env-dask-add-packages');
    };
    const typedKept = async (): Promise<void> => {
      await expect(dialog(page)).toHaveCount(1);
      await expect(daskForm.getByTestId('gpu-env-dask-target')).toHaveValue(
        `environment:${BARE}`
      );
      await expect(daskForm.getByTestId('gpu-env-dask-name')).toHaveValue(
        'galata-bare'
      );
      await expect(daskForm.getByTestId('gpu-env-dask-workers')).toHaveValue(
        '2'
      );
      await expect(
        daskForm.getByTestId('gpu-env-submit-time-limit')
      ).toHaveValue('0:20:00');
    };
    await daskForm
      .getByTestId('gpu-env-dask-target')
      .selectOption(`environment:${BARE}`);
    await daskForm.getByTestId('gpu-env-submit-backend').selectOption('local');
    await daskForm.getByTestId('gpu-env-dask-name').fill('galata-bare');
    await daskForm.getByTestId('gpu-env-dask-workers').fill('2');
    await daskForm.getByTestId('gpu-env-submit-time-limit').fill('0:20:00');
    const add = await start();
    // The demo's channel has neither: both are for PyPI, the dashboard's
    // bokeh with distributed.
    await expect(add).toHaveText(`Add distributed, bokeh to '${BARE}'…`);
    await add.click();

    // The packages dialog at once, in place of the Dask dialog (not queued
    // behind it), the packages in the PyPI field.
    const packages = dialog(page).filter({ hasText: `Packages of '${BARE}'` });
    await expect(packages).toBeVisible();
    await expect(dialog(page)).toHaveCount(1);
    await expect(packages.getByTestId('gpu-env-packages-pip-add')).toHaveValue(
      'distributed, bokeh'
    );
    await expect(packages.getByTestId('gpu-env-packages-add')).toHaveValue('');

    // Backing out: the Dask dialog again, with everything typed.
    await dialogButton(page, 'Cancel').click();
    await typedKept();

    // Added (tabulate stands in: this offline index has no distributed):
    // the Dask dialog comes back once the change is in, not before.
    await (await start()).click();
    await packages.getByTestId('gpu-env-packages-pip-add').fill('');
    await packages.getByTestId('gpu-env-packages-add').fill('tabulate');
    await dialogButton(page, 'Review…', true).click();
    await dialogButton(page, 'Apply', true).click();
    await expect(daskForm).toBeVisible({ timeout: 60000 });
    const env = await apiGet<IEnvironmentDetail>(
      page.request,
      `environments/${BARE}`
    );
    expect(env.packages.some(p => p.name === 'tabulate')).toBe(true);
    await typedKept();
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);
    await removeEnvironment(page.request, BARE);
  });
});
