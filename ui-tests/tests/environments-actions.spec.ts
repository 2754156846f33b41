/**
 * The rows' actions at the sidebar's default width: names in full, every
 * action in a labelled "⋯" menu; the GPU check of an environment (from its
 * menu and from the palette) with what it found; and a notebook whose kernel
 * runs from a packed image. Against the real server and the real managed
 * environment demo-python; each test sets up what it needs through the API.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type { IImage, ITask } from '../../labextension/src/api/types';
import type { IGpuCheck } from '../../labextension/src/environments/gpucheck';
import {
  API,
  PANEL_ID,
  clickToastButton,
  dialog,
  dialogButton,
  execute,
  runFromPalette,
  screenshotDialog,
  screenshotPath
} from './helpers';
import {
  DEMO,
  chooseRowAction,
  ensureClone,
  envRow,
  imagesSection,
  listImages,
  menuItem,
  menuLabels,
  openRowMenu,
  removeEnvironment,
  rowAction,
  startPack,
  waitTask
} from './environments-helpers';

const CLONE = 'ui-actions';
/** Whether an element's text is cut (an ellipsis), read in the page. */
function isCut(locator: Locator): Promise<boolean> {
  return locator.evaluate(
    (node: Element) => node.scrollWidth > node.clientWidth + 0.5
  );
}

/** Run a palette command of ours by its label. */
async function runOurs(
  page: IJupyterLabPageFixture,
  label: string,
  id: string
): Promise<void> {
  await runFromPalette(page, label, { command: `jupyter-gpu-env:${id}` });
}

/**
 * The result of the GPU check the page starts next (call it before the
 * click that starts it; await it after).
 */
function nextGpuCheck(page: IJupyterLabPageFixture): Promise<IGpuCheck> {
  const started = page.waitForResponse(
    r =>
      new URL(r.url()).pathname.endsWith('/gpu-check') &&
      r.request().method() === 'POST'
  );
  return started.then(async response => {
    expect(response.status()).toBe(202);
    const task = await waitTask(page.request, (await response.json()) as ITask);
    expect(task.state).toBe('succeeded');
    return task.result as IGpuCheck;
  });
}

test.describe('Row actions', () => {
  // Other suites expect to find none of the user's own environments at first.
  test.afterEach(async ({ page }) => {
    await removeEnvironment(page.request, CLONE);
  });

  test('rows fit the default sidebar width, their actions in a labelled menu', async ({
    page
  }) => {
    await ensureClone(page.request, CLONE);
    await page.sidebar.openTab(PANEL_ID);

    for (const name of [DEMO, CLONE]) {
      const row = envRow(page, name);
      await expect(row.locator('.jp-GpuEnv-rowName')).toHaveText(name);
      expect(await isCut(row.locator('.jp-GpuEnv-rowName'))).toBe(false);
      // On the row: the kernel toggle and the menu, nothing else.
      await expect(row.locator('.jp-GpuEnv-rowHeader button')).toHaveCount(3); // + the name's toggle
    }

    const managed = await openRowMenu(envRow(page, DEMO));
    await expect(managed).toHaveAttribute('aria-label', `Actions on '${DEMO}'`);
    expect(await menuLabels(managed)).toEqual([
      'Check GPU',
      'Register as a kernel',
      'Kernel on the batch system…',
      'Clone…',
      'Export…',
      'Pack into an image…'
    ]);
    await page.keyboard.press('Escape');
    await expect(managed).toBeHidden();

    // The user's own environment adds changes and deletion.
    const own = await openRowMenu(envRow(page, CLONE));
    expect(await menuLabels(own)).toEqual([
      'Check GPU',
      'Register as a kernel',
      'Kernel on the batch system…',
      'Add or remove packages…',
      'History and undo…',
      'Clone…',
      'Export…',
      'Pack into an image…',
      'Share with team…',
      'Delete…'
    ]);
    await page.screenshot({
      path: screenshotPath('environments-menu.png'),
      clip: await own.evaluate((menu: Element) => {
        const panel = document.querySelector('[data-testid="gpu-env-panel"]');
        const a = panel!.getBoundingClientRect();
        const b = menu.getBoundingClientRect();
        return {
          x: a.x,
          y: a.y,
          width: Math.max(a.right, b.right) - a.x,
          height: Math.max(b.bottom + 8, 400) - a.y
        };
      })
    });
    await page.keyboard.press('Escape');
  });

  test('checks from a row whether an environment sees the GPU, and says what it found', async ({
    page
  }) => {
    await page.sidebar.openTab(PANEL_ID);
    const row = envRow(page, DEMO);
    const check = nextGpuCheck(page);
    await chooseRowAction(row, 'check-gpu');

    // The check runs under the row, then its verdict stays in a notification.
    const task = row.getByTestId('gpu-env-task');
    await expect(task).toHaveAttribute('data-kind', 'gpu-check');
    const result = await check;
    const verdict = result.ok
      ? `'${DEMO}' sees the GPU: ${result.message}`
      : `'${DEMO}' cannot use a GPU: ${result.message}`;
    const toast = page.locator('.jp-toast-message', { hasText: verdict });
    await expect(toast).toBeVisible();
    // The demo environment has neither torch nor cupy; this machine, no GPU driver.
    expect(result.details.framework).toBeNull();

    await clickToastButton(page, toast, 'Details');
    const found = dialog(page).getByTestId('gpu-env-gpu-check');
    await expect(found).toHaveAttribute('data-ok', String(result.ok));
    await expect(found).toContainText(result.message);
    await expect(found.locator('[data-fact="Python"] td')).toHaveText(
      `${result.details.python} at ${result.details.prefix}`
    );
    const driver = result.details.driver!;
    await expect(found.locator('[data-fact="Driver"] td')).toHaveText(
      driver.loaded
        ? new RegExp(`^loaded, ${driver.count} device\\(s\\)`)
        : `not loaded: ${driver.error}`
    );
    await expect(found.locator('[data-fact="Computation"] td')).toHaveText(
      'not tried: neither torch nor cupy is installed'
    );
    await screenshotDialog(page, 'gpu-check.png');
    await dialogButton(page, 'Close').click();
    await expect(dialog(page)).toHaveCount(0);
  });

  test('checks the GPU from the command palette, asking which environment', async ({
    page
  }) => {
    await ensureClone(page.request, CLONE);
    const check = nextGpuCheck(page);
    await runOurs(
      page,
      'Check whether an environment sees the GPU…',
      'check-gpu'
    );
    const choice = dialog(page).locator('select');
    await expect(choice.locator('option', { hasText: DEMO })).toHaveCount(1);
    await choice.selectOption(CLONE);
    await dialogButton(page, 'Check').click();
    const result = await check;
    await expect(
      page.locator('.jp-toast-message', {
        hasText: result.ok
          ? `'${CLONE}' sees the GPU`
          : `'${CLONE}' cannot use a GPU`
      })
    ).toBeVisible();
  });

  test('opens a notebook whose kernel runs from a packed image', async ({
    page
  }) => {
    let image = (await listImages(page.request)).find(
      i => i.environment === DEMO && i.compression === 'zstd'
    );
    if (!image) {
      const packed = await waitTask(
        page.request,
        await startPack(page.request, DEMO, 'zstd')
      );
      expect(packed.state).toBe('succeeded');
      image = packed.result as IImage;
    }
    const kernelName = `Python (${DEMO}, image)`;
    await page.sidebar.openTab(PANEL_ID);
    const row = imagesSection(page).locator(
      `[data-testid="gpu-env-image"][data-id="${image.id}"]`
    );
    await rowAction(row, 'notebook').click();

    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Registered '${kernelName}': it is in the Launcher too.`
      })
    ).toBeVisible();
    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Toolbar-kernelName')).toHaveText(
      kernelName
    );
    // The kernel really runs from the mounted image: its Python lives there.
    await page.notebook.setCell(0, 'code', 'import sys; print(sys.prefix)');
    await page.notebook.runCell(0);
    expect(await page.notebook.getCellTextOutput(0)).toEqual([
      expect.stringMatching(new RegExp(`/gpu-env-mounts/${image.id}\\s*$`))
    ]);

    // The same from the palette, which asks which image; the kernel is in the Launcher.
    await runOurs(page, 'New notebook from an image…', 'image-notebook');
    const choice = dialog(page).locator('select');
    await expect(choice.locator('option')).toContainText([
      `${DEMO} (squashfs · zstd, ${image.id})`
    ]);
    await choice.selectOption({
      label: `${DEMO} (squashfs · zstd, ${image.id})`
    });
    await dialogButton(page, 'Open').click();
    await expect(
      page.locator('.jp-NotebookPanel:visible .jp-Toolbar-kernelName')
    ).toHaveText(kernelName);
    await execute(page, 'launcher:create');
    await expect(
      page
        .locator('.jp-Launcher:visible .jp-LauncherCard', {
          hasText: kernelName
        })
        .first()
    ).toBeVisible();

    // The image goes with its kernels stopped, its kernelspec and its mount.
    const deleted = await page.request.delete(
      `${API}/images/${image.id}?shutdown_kernels=true`
    );
    expect(deleted.ok()).toBe(true);
  });
});
