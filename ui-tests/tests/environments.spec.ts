/**
 * The Environments and Images sections against the real server and a real
 * managed conda environment (demo-python, built offline by
 * jupyter_server_test_config.py): clone, kernel, pack, delete. Every test
 * sets up what it needs through the API, so each can run alone.
 */
import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import {
  PANEL_ID,
  clickToastButton,
  dialog,
  dialogButton,
  execute,
  runFromPalette,
  screenshotDialog,
  screenshotPanel,
  screenshotPath
} from './helpers';
import {
  DEMO,
  chooseRowAction,
  ensureClone,
  envRow,
  environmentsSection,
  imagesSection,
  listEnvironments,
  listImages,
  menuItem,
  openRowMenu,
  removeEnvironment,
  removeImages,
  rowAction,
  setKernel,
  startPack,
  waitTask
} from './environments-helpers';

const CLONE = 'ui-clone';

test.describe('Environments and images', () => {
  test.beforeEach(async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.sidebar.setWidth(320);
  });

  test('clones the managed environment from the panel', async ({ page }) => {
    await removeEnvironment(page.request, CLONE);
    await page.sidebar.openTab(PANEL_ID);

    const managed = envRow(page, DEMO);
    await expect(managed).toHaveAttribute('data-kind', 'managed');
    await expect(managed).toContainText(/Python 3\.\d+/);
    await expect(managed).toContainText('ipykernel');
    await expect(page.getByTestId('gpu-env-env-empty-own')).toContainText(
      'None of your own yet'
    );

    await chooseRowAction(managed, 'clone-environment');
    const name = dialog(page).getByTestId('gpu-env-clone-name');
    await expect(name).toHaveValue(`${DEMO}-copy`);
    await name.fill(CLONE);
    await dialogButton(page, 'Clone', true).click();

    // The task shows at once, with a progress bar, then its last word.
    const task = environmentsSection(page)
      .getByTestId('gpu-env-task')
      .filter({ hasText: `as '${CLONE}'` });
    await expect(task).toBeVisible();
    await expect(task.getByRole('progressbar')).toBeVisible();
    await expect(task).toHaveAttribute('data-state', 'succeeded');

    const mine = page.getByTestId('gpu-env-env-list-own');
    const row = mine.locator(`[data-name="${CLONE}"]`);
    await expect(row).toBeVisible();
    await expect(row).toContainText(`cloned from ${DEMO}`);
    // Hard-linked from the package cache: only a little is new.
    await expect(row).toContainText(/\(\d+(\.\d)? (KiB|MiB) new\)/);
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Cloned '${DEMO}' as '${CLONE}'`
      })
    ).toBeVisible();

    // The row opens on its package list, read from the server.
    await row.locator('.jp-GpuEnv-envToggle').click();
    await expect(row.getByTestId('gpu-env-env-packages')).toContainText(
      'ipykernel'
    );
  });

  test('registers a kernel that the Launcher shows without reload', async ({
    page
  }) => {
    await ensureClone(page.request, CLONE, { kernel: false });
    await page.sidebar.openTab(PANEL_ID);
    await execute(page, 'launcher:create');
    const card = page.locator('.jp-Launcher:visible .jp-LauncherCard', {
      hasText: `Python (${CLONE})`
    });
    await expect(page.locator('.jp-Launcher:visible')).toHaveCount(1);
    await expect(card).toHaveCount(0);

    const row = envRow(page, CLONE);
    const toggle = rowAction(row, 'kernel');
    await expect(toggle).toHaveAttribute('aria-pressed', 'false');
    await toggle.click();
    await expect(row).toHaveAttribute('data-kernel', `gpu-env-${CLONE}`);
    await expect(toggle).toHaveAttribute('aria-pressed', 'true');
    await expect(row.getByTestId('gpu-env-badge-kernel')).toBeVisible();
    // The open Launcher gains the cards (notebook, console): no page reload.
    await expect(card.first()).toBeVisible();

    // And loses it when the kernel is removed.
    await toggle.click();
    await expect(row).toHaveAttribute('data-kernel', '');
    await expect(card).toHaveCount(0);
  });

  test('refuses a bad name and creates nothing', async ({ page }) => {
    const before = (await listEnvironments(page.request)).map(e => e.name);
    await page.sidebar.openTab(PANEL_ID);
    await chooseRowAction(envRow(page, DEMO), 'clone-environment');

    const name = dialog(page).getByTestId('gpu-env-clone-name');
    const problem = dialog(page).getByTestId('gpu-env-clone-problem');
    const accept = dialogButton(page, 'Clone', true);
    await expect(problem).toBeHidden();

    const cases: [string, RegExp][] = [
      ['-bad', /must not start with '\.' or '-'/],
      ['../escape', /without '\/'/],
      ['two words', /must not contain spaces/],
      ['x'.repeat(65), /65 characters long; at most 64/],
      ['naïve', /only contain letters, digits.*'ï'/],
      [DEMO, /already exists/]
    ];
    for (const [value, message] of cases) {
      await name.fill(value);
      await expect(problem).toHaveText(message);
      await expect(accept).toBeDisabled();
    }
    // Enter does not get past the check either.
    await name.press('Enter');
    await expect(dialog(page)).toBeVisible();
    await name.fill('-bad');
    await screenshotDialog(page, 'clone-invalid.png');

    await name.fill('fine-name');
    await expect(problem).toBeHidden();
    await expect(accept).toBeEnabled();
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);

    const after = (await listEnvironments(page.request)).map(e => e.name);
    expect(after.sort()).toEqual(before.sort());

    // The server stays the judge: a name taken meanwhile (another tab)
    // brings the dialog back with the server's message.
    const race = 'ui-race';
    await removeEnvironment(page.request, race);
    await chooseRowAction(envRow(page, DEMO), 'clone-environment');
    await name.fill(race);
    await expect(accept).toBeEnabled();
    await ensureClone(page.request, race);
    await accept.click();
    await expect(problem).toHaveText(
      `An environment named '${race}' already exists.`
    );
    await expect(name).toHaveValue(race);
    await dialogButton(page, 'Cancel').click();
    await removeEnvironment(page.request, race);
  });

  test('packs a clone into an image and shows how to use it', async ({
    page
  }) => {
    await ensureClone(page.request, CLONE);
    await removeImages(page.request, CLONE);
    // For the screenshots: a registered kernel, and room for the lists.
    await setKernel(page.request, CLONE, true);
    await page.sidebar.openTab(PANEL_ID);
    await page
      .locator('[data-section="memory"] > .jp-GpuEnv-sectionTitle')
      .click();
    await expect(page.getByTestId('gpu-env-images-empty')).toContainText(
      'one squashfs file'
    );

    const row = envRow(page, CLONE);
    await chooseRowAction(row, 'pack-environment');
    await expect(
      dialog(page).getByTestId('gpu-env-pack-compression')
    ).toHaveValue('zstd');
    await dialogButton(page, 'Pack', true).click();

    // Progress shows under the environment being packed.
    const task = row.getByTestId('gpu-env-task');
    await expect(task).toBeVisible();
    await expect(task.getByRole('progressbar')).toBeVisible();
    await expect(task).toHaveAttribute('data-state', 'running');
    // In words, whichever step the poll catches: a small pack is done within a second.
    await expect(task).toContainText(
      /Reading the environment|rewritten for|Compressing/,
      { timeout: 20000 }
    );
    await environmentsSection(page).screenshot({
      path: screenshotPath('environments-packing.png')
    });

    const image = imagesSection(page).locator(
      `[data-testid="gpu-env-image"][data-environment="${CLONE}"]`
    );
    await expect(image).toBeVisible({ timeout: 60000 });
    await expect(image).toContainText('squashfs · zstd');
    await expect(image.getByTestId('gpu-env-image-size')).toHaveText(
      /^\d+(\.\d)? MiB, \d{1,3}(,\d{3})* files in one$/
    );
    await expect(image).toContainText('just now');
    const [listed] = (await listImages(page.request)).filter(
      i => i.environment === CLONE
    );
    expect(listed.size_bytes).toBeGreaterThan(0);
    await expect(image).toHaveAttribute('data-size', String(listed.size_bytes));

    // The finished task gives way to the image after a few seconds.
    await expect(task).toHaveCount(0);
    await screenshotPanel(page, screenshotPath('environments.png'));

    await chooseRowAction(image, 'image-usage');
    const usage = dialog(page).getByTestId('gpu-env-image-usage');
    await expect(usage.locator('[data-usage="apptainer"] pre')).toHaveText(
      `apptainer exec --bind ${listed.path}:/opt/gpu-env/${CLONE}:image-src=/ ` +
        `CONTAINER.sif /opt/gpu-env/${CLONE}/bin/python`
    );
    await expect(usage.locator('[data-usage="squashfuse"] pre')).toContainText(
      `squashfuse ${listed.path}`
    );
    await screenshotDialog(page, 'image-usage.png');
    await usage.locator('button[data-usage="apptainer"]').click();
    await expect(usage.locator('button[data-usage="apptainer"]')).toHaveText(
      'Copied'
    );
    await dialogButton(page, 'Close').click();
    await expect(dialog(page)).toHaveCount(0);

    // The file itself, through the browser.
    const download = page.waitForEvent('download');
    await chooseRowAction(image, 'image-download');
    expect((await download).suggestedFilename()).toBe(
      path.basename(listed.path)
    );

    // Deleting asks first, then the list is empty again.
    await chooseRowAction(image, 'image-delete');
    await expect(dialog(page)).toContainText(listed.path);
    await dialogButton(page, 'Delete', true).click();
    await expect(image).toHaveCount(0);
    await expect(page.getByTestId('gpu-env-images-empty')).toBeVisible();
    expect(
      (await listImages(page.request)).filter(i => i.environment === CLONE)
    ).toHaveLength(0);
  });

  test('exports an environment as a file', async ({ page }) => {
    await page.sidebar.openTab(PANEL_ID);
    const row = envRow(page, DEMO);
    for (const [choice, file, line] of [
      ['environment.yml', `${DEMO}-environment.yml`, `name: ${DEMO}`],
      ['Explicit lock', `${DEMO}-explicit.txt`, '@EXPLICIT']
    ]) {
      await chooseRowAction(row, 'export-environment');
      await dialog(page).getByText(choice).click();
      const download = page.waitForEvent('download');
      await dialogButton(page, 'Download', true).click();
      const saved = await download;
      expect(saved.suggestedFilename()).toBe(file);
      const text = fs.readFileSync(await saved.path(), 'utf-8');
      expect(text).toContain(line);
      expect(text).toContain('python');
    }
  });

  test('follows a task started elsewhere, and cancels it', async ({ page }) => {
    await removeImages(page.request, DEMO);
    // xz is the slowest compression: the pack is still running on load.
    const started = await startPack(page.request, DEMO, 'xz');
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);

    const task = envRow(page, DEMO).getByTestId('gpu-env-task');
    await expect(task).toHaveAttribute('data-kind', 'pack');
    await expect(task).toHaveAttribute('data-state', /pending|running/);
    const menu = await openRowMenu(envRow(page, DEMO));
    await expect(menuItem(menu, 'pack-environment')).toHaveAttribute(
      'aria-disabled',
      'true'
    );
    await page.keyboard.press('Escape');
    await expect(menu).toBeHidden();
    await task.getByTestId('gpu-env-task-cancel').click();
    await expect(task).toHaveAttribute('data-state', 'cancelled');
    await expect(task).toContainText('nothing was kept');

    expect((await waitTask(page.request, started)).state).toBe('cancelled');
    const images = await listImages(page.request);
    expect(images.filter(i => i.environment === DEMO)).toHaveLength(0);
  });

  test('removes a package and reports what went with it', async ({ page }) => {
    const name = 'ui-pkgs';
    await removeEnvironment(page.request, name);
    await ensureClone(page.request, name);
    await page.sidebar.openTab(PANEL_ID);

    const row = envRow(page, name);
    await expect(row).toContainText('31 packages');
    await chooseRowAction(row, 'edit-packages');

    // Typing a name offers what the channels have; a click puts it in.
    const add = dialog(page).getByTestId('gpu-env-packages-add');
    await add.pressSequentially('ipyk');
    const offer = dialog(page)
      .getByTestId('gpu-env-suggest-conda')
      .getByRole('button', { name: /^ipykernel/ });
    await offer.click();
    await expect(add).toHaveValue('ipykernel');
    await add.fill('');
    await dialog(page)
      .getByTestId('gpu-env-packages-remove')
      .locator('label', { hasText: 'asttokens' })
      .locator('input')
      .check();
    await dialogButton(page, 'Review…', true).click();

    // The plan comes first: asttokens takes what depends on it, ipykernel
    // included, and Apply waits until those removals are confirmed.
    const plan = dialog(page).getByTestId('gpu-env-plan');
    await expect(plan).toContainText('will no longer run notebooks');
    await expect(plan.locator('tr[data-unrequested]')).toHaveCount(3);
    const apply = dialogButton(page, 'Apply', true);
    await expect(apply).toBeDisabled();
    await expect(row).toContainText('31 packages'); // nothing changed yet
    await plan.getByTestId('gpu-env-plan-confirm').check();
    await apply.click();

    const toast = page.locator('.jp-toast-message', {
      hasText: `Changed '${name}'`
    });
    await expect(toast).toContainText(
      'removed asttokens, ipykernel, ipython, stack-data'
    );
    await expect(row).toContainText('27 packages');
    await expect(row.getByTestId('gpu-env-badge-no-ipykernel')).toBeVisible();
    await clickToastButton(page, toast, 'Details');
    await expect(
      dialog(page).getByTestId('gpu-env-packages-report')
    ).toContainText(/ipykernel-\S+/);
    await dialogButton(page, 'Close').click();

    // Without ipykernel, registering a kernel says why, in the server's words.
    await rowAction(row, 'kernel').click();
    await expect(
      page.locator('.jp-toast-message', { hasText: 'has no ipykernel' })
    ).toContainText(`Could not register '${name}' as a kernel`);
    await expect(row).toHaveAttribute('data-kernel', '');

    // History shows the change; undo brings ipykernel back, in one swap.
    await chooseRowAction(row, 'environment-history');
    const history = dialog(page).getByTestId('gpu-env-history');
    await expect(history).toContainText('−asttokens');
    await expect(
      dialog(page).getByTestId('gpu-env-history-undo')
    ).toContainText('Undo the last change (−asttokens)');
    // Enter closes the history and undoes nothing (issue 38, item 8).
    await page.keyboard.press('Enter');
    await expect(dialog(page)).toHaveCount(0);
    await expect(row).toContainText('27 packages');
    await chooseRowAction(row, 'environment-history');
    await dialogButton(page, 'Undo last change', true).click();
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Undid −asttokens in '${name}'.`
      })
    ).toBeVisible();
    await expect(row).toContainText('31 packages');
    await expect(row.getByTestId('gpu-env-badge-no-ipykernel')).toHaveCount(0);
    await removeEnvironment(page.request, name);
  });

  test('clones and packs from the command palette', async ({ page }) => {
    const name = 'ui-palette';
    await removeEnvironment(page.request, name);
    await ensureClone(page.request, CLONE);
    // The commands work with the sidebar closed.
    await expect(environmentsSection(page)).toBeHidden();

    const palette = (label: string, id: string): Promise<void> =>
      runFromPalette(page, label, {
        command: `jupyter-gpu-env:${id}`,
        category: 'GPU Env'
      });

    await palette('Clone environment…', 'clone-environment');
    const source = dialog(page).getByTestId('gpu-env-clone-source');
    await expect(source).toHaveValue(DEMO);
    await source.selectOption(CLONE);
    const field = dialog(page).getByTestId('gpu-env-clone-name');
    await expect(field).toHaveValue(`${CLONE}-copy`);
    await field.fill(name);
    await field.press('Enter');
    await expect(
      page.locator('.jp-toast-message', { hasText: `as '${name}'` })
    ).toBeVisible();
    await page.sidebar.openTab(PANEL_ID);
    const row = envRow(page, name);
    await expect(row).toContainText(`cloned from ${CLONE}`);

    await palette('Pack environment into an image…', 'pack-environment');
    await expect(
      dialog(page).getByTestId('gpu-env-pack-environment')
    ).toBeVisible();
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);
    await removeEnvironment(page.request, name);
  });

  test('deletes a clone and its kernel after a confirmation', async ({
    page
  }) => {
    await ensureClone(page.request, CLONE, { kernel: true });
    await page.sidebar.openTab(PANEL_ID);

    const row = envRow(page, CLONE);
    await chooseRowAction(row, 'delete-environment');
    await expect(dialog(page)).toContainText(`Delete '${CLONE}'?`);
    await expect(dialog(page)).toContainText(`Python (${CLONE})`);
    await expect(dialog(page)).toContainText('cannot be undone');

    // Cancel keeps it.
    await dialogButton(page, 'Cancel').click();
    await expect(row).toBeVisible();

    await chooseRowAction(row, 'delete-environment');
    await dialogButton(page, 'Delete', true).click();
    await expect(row).toHaveCount(0);
    const names = (await listEnvironments(page.request)).map(e => e.name);
    expect(names).not.toContain(CLONE);
    const specs = await (await page.request.get('/api/kernelspecs')).json();
    expect(Object.keys(specs.kernelspecs)).not.toContain(`gpu-env-${CLONE}`);
  });

  // Galata lists only the sessions the page itself opened; this test needs the server's own list.
  test.describe('with the server sessions', () => {
    test.use({ sessions: null, kernels: null });

    test('offers to shut down the kernels in the way of a deletion', async ({
      page
    }) => {
      const name = 'ui-in-use';
      await removeEnvironment(page.request, name);
      await ensureClone(page.request, name, { kernel: true });
      const session = await page.request.post('/api/sessions', {
        data: {
          path: 'in-use.ipynb',
          name: 'in-use.ipynb',
          type: 'notebook',
          kernel: { name: `gpu-env-${name}` }
        }
      });
      expect(session.ok()).toBe(true);
      const kernelId = (await session.json()).kernel.id;
      await page.sidebar.openTab(PANEL_ID);
      const row = envRow(page, name);

      // Removing the kernelspec that a running notebook uses asks first.
      await rowAction(row, 'kernel').click();
      await expect(
        dialog(page).getByTestId('gpu-env-kernelspec-in-use')
      ).toContainText('in-use.ipynb');
      await dialogButton(page, 'Cancel').click();
      await expect(row).toHaveAttribute('data-kernel', `gpu-env-${name}`);

      // Deleting the environment names the kernel in its way and offers to stop it.
      await chooseRowAction(row, 'delete-environment');
      await dialogButton(page, 'Delete', true).click();
      const inUse = dialog(page).getByTestId('gpu-env-kernels-in-use');
      await expect(inUse).toContainText(
        `1 kernel of this server run in '${name}'`
      );
      await expect(inUse).toContainText('in-use.ipynb');
      await dialogButton(page, 'Shut down 1 kernel and delete').click();
      await expect(row).toHaveCount(0);
      const kernels = await (await page.request.get('/api/kernels')).json();
      expect(kernels.map((k: { id: string }) => k.id)).not.toContain(kernelId);
    });
  });
});
