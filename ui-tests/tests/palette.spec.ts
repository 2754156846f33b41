/**
 * Issue 27, items 6 and 7 at the default sidebar width: environment commands
 * in the palette (a picker asks which environment), an image's squashfuse
 * lines shown under it once packed (not only in its "⋯" menu), and the
 * "Share with team" item saying that sharing is off, and how an admin turns
 * it on, where the server has no shared folder.
 */
import { expect, test } from '@jupyterlab/galata';

import { API, PANEL_ID, dialog, dialogButton, runFromPalette } from './helpers';
import {
  ensureClone,
  envRow,
  imagesSection,
  menuItem,
  openRowMenu,
  removeEnvironment,
  chooseRowAction,
  listImages,
  removeImages
} from './environments-helpers';

const CLONE = 'ui-palette';

test.describe('Palette, images and sharing in words', () => {
  test.beforeEach(async ({ page }) => {
    await ensureClone(page.request, CLONE);
  });
  test.afterEach(async ({ page }) => {
    await removeImages(page.request, CLONE);
    await removeEnvironment(page.request, CLONE);
  });

  test('environment commands run from the palette, asking which environment', async ({
    page
  }) => {
    await runFromPalette(page, 'Undo a change to an environment', {
      command: 'jupyter-gpu-env:environment-history'
    });
    // The picker offers the user's own environments only (undo changes them).
    const picker = dialog(page);
    await expect(picker).toContainText('Undo a change to an environment');
    const items = await picker.locator('select option').allTextContents();
    expect(items).toContain(CLONE);
    expect(items).not.toContain('demo-python');
    await picker.locator('select').selectOption(CLONE);
    await dialogButton(page, 'Next').click();
    await expect(dialog(page)).toContainText(CLONE);
    await page.keyboard.press('Escape');

    for (const [label, command] of [
      ['Add or remove packages in an environment…', 'edit-packages'],
      ['Export an environment…', 'export-environment'],
      [
        'Register an environment as a kernel (or remove its kernel)…',
        'toggle-kernel'
      ]
    ]) {
      await runFromPalette(page, label, {
        command: `jupyter-gpu-env:${command}`
      });
      await expect(dialog(page).locator('select')).toBeVisible();
      await dialogButton(page, 'Cancel').click();
      await expect(dialog(page)).toBeHidden();
    }
  });

  test('a packed image shows how to use it under its row, mount to unmount', async ({
    page
  }) => {
    // Packed while the Lab is open, from the row's menu: its lines show open.
    await removeImages(page.request, CLONE);
    await page.sidebar.openTab(PANEL_ID);
    // Listed first (empty, or other environments' images).
    await expect(
      imagesSection(page)
        .locator(
          '[data-testid="gpu-env-image"], [data-testid="gpu-env-images-empty"]'
        )
        .first()
    ).toBeVisible();
    await chooseRowAction(envRow(page, CLONE), 'pack-environment');
    await dialogButton(page, 'Pack', true).click();
    const row = imagesSection(page).locator(
      `[data-testid="gpu-env-image"][data-environment="${CLONE}"]`
    );
    await expect(row).toBeVisible({ timeout: 60000 });
    const [image] = (await listImages(page.request)).filter(
      i => i.environment === CLONE
    );
    const howTo = row.getByTestId('gpu-env-image-how-to-use');
    await expect(howTo).toHaveAttribute('open', '');
    const mountLine = howTo.locator('[data-usage="squashfuse"] pre');
    await expect(mountLine).toHaveText(image.usage.squashfuse);
    await expect(mountLine).toContainText(
      `mkdir -p "\${TMPDIR:-/tmp}/gpu-env-${image.id}"`
    );
    await expect(howTo.locator('[data-usage="unmount"] pre')).toContainText(
      `fusermount3 -u "\${TMPDIR:-/tmp}/gpu-env-${image.id}"`
    );
    // The lines wrap inside the sidebar: nothing wider than the panel.
    const [rowWidth, linesWidth] = await Promise.all([
      row.evaluate((n: Element) => n.getBoundingClientRect().right),
      howTo.evaluate((n: Element) => n.getBoundingClientRect().right)
    ]);
    expect(linesWidth).toBeLessThanOrEqual(rowWidth + 0.5);
    await howTo.locator('summary').click();
    await expect(howTo).not.toHaveAttribute('open', '');

    // Images already there when the Lab opens stay closed: at the default
    // width, open lines under each would fill the sidebar.
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    await expect(row).toBeVisible();
    await expect(howTo).not.toHaveAttribute('open', '');
    await expect(howTo.locator('[data-usage="squashfuse"] pre')).toBeHidden();
  });

  test("where sharing is off, the menu says so and names the admin's option", async ({
    page
  }) => {
    // This server shares; the listing is answered as a server without a shared folder would.
    await page.route(`**${API}/environments*`, async route => {
      if (route.request().method() !== 'GET') {
        return route.continue();
      }
      const response = await route.fetch();
      const listed = await response.json();
      await route.fulfill({ response, json: { ...listed, sharing: false } });
    });
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    const menu = await openRowMenu(envRow(page, CLONE));
    const share = menuItem(menu, 'publish-environment');
    await expect(share).toBeVisible();
    await expect(share.locator('.lm-Menu-itemLabel')).toHaveText(
      'Share with team: off on this server…'
    );
    await share.click();
    const told = dialog(page);
    await expect(told).toContainText('Sharing is off on this server');
    await expect(told.getByTestId('gpu-env-sharing-off')).toContainText(
      'c.GpuEnvApp.shared_env_dirs = ["/shared/team-envs"]'
    );
    await dialogButton(page, 'Close').click();
    await expect(told).toBeHidden();
  });
});
