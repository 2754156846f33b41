/**
 * The GPU Env sidebar against the real server extension (no mocks here):
 * host memory comes from this machine's cgroup or /proc/meminfo.
 */
import { expect, test } from '@jupyterlab/galata';

import { formatBytes } from '../../labextension/src/components/format';
import {
  PANEL_ID,
  execute,
  memoryBar,
  panel,
  readMemory,
  runFromPalette,
  screenshotPanel,
  screenshotPath
} from './helpers';

const BYTE_FIGURE =
  /\d+(\.\d)? (B|KiB|MiB|GiB|TiB|PiB) of \d+(\.\d)? (B|KiB|MiB|GiB|TiB|PiB)/;

test.describe('GPU Env sidebar', () => {
  test('opens from its sidebar tab and shows real memory figures', async ({
    page
  }) => {
    // Tall enough for the whole panel in the screenshot below.
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.sidebar.setWidth(300);
    await page.sidebar.openTab(PANEL_ID);
    await expect(panel(page)).toBeVisible();
    await expect(memoryBar(page)).toBeVisible();

    const reading = await readMemory(page);
    expect(reading.used).toMatch(/^\d+$/);
    expect(reading.limit).toMatch(/^\d+$/);
    const used = Number(reading.used);
    const limit = Number(reading.limit);
    expect(used).toBeGreaterThan(0);
    expect(limit).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(limit);
    expect(['cgroup2', 'cgroup1', 'host']).toContain(reading.source);

    // The visible figure is the real limit, formatted.
    expect(reading.text).toMatch(BYTE_FIGURE);
    expect(reading.text).toContain(`of ${formatBytes(limit)}`);

    // Where the limit comes from, in words.
    await expect(
      panel(page).locator('.jp-GpuEnv-memorySection .jp-GpuEnv-note').first()
    ).toHaveText(
      /cgroup v2 limit|cgroup v1 limit|no container limit — machine total/
    );

    // CPU: a limit in cores.
    const cpuLimit = await page
      .getByTestId('gpu-env-cpu-bar')
      .getAttribute('data-limit');
    expect(Number(cpuLimit)).toBeGreaterThan(0);

    // No GPU on this machine: the server's own explanation, not fake data.
    const gpuEmpty = page.getByTestId('gpu-env-gpu-empty');
    await expect(gpuEmpty).toBeVisible();
    await expect(gpuEmpty).toContainText('No GPU visible');

    // Environments: the real demo environment the test server is given.
    await expect(
      page
        .getByTestId('gpu-env-env-list-managed')
        .locator('[data-name="demo-python"]')
    ).toBeVisible();
    await expect(page.getByTestId('gpu-env-section-images')).toBeVisible();
    await expect(page.getByTestId('gpu-env-section-jobs')).toBeVisible();
    await expect(page.getByTestId('gpu-env-error')).toHaveCount(0);

    // Memory is read again on the poll interval (about 2 s).
    await expect(panel(page).locator('.jp-GpuEnv-updated')).toBeVisible();
    const first = await panel(page).locator('.jp-GpuEnv-updated').textContent();
    await expect(panel(page).locator('.jp-GpuEnv-updated')).not.toHaveText(
      first ?? '',
      { timeout: 10000 }
    );

    await screenshotPanel(page, screenshotPath('gpu-env-panel.png'));
    await page.screenshot({
      path: screenshotPath('gpu-env-lab.png')
    });
  });

  test('opens from the command palette', async ({ page }) => {
    await expect(panel(page)).toBeHidden();
    await runFromPalette(page, 'Open GPU Env panel');

    await expect(panel(page)).toBeVisible();
    await expect(memoryBar(page)).toBeVisible();
    expect(await page.sidebar.isTabOpen(PANEL_ID)).toBe(true);
  });

  test('refreshes from the toolbar and the palette', async ({ page }) => {
    await page.sidebar.openTab(PANEL_ID);
    await expect(memoryBar(page)).toBeVisible();
    const answer = page.waitForResponse(
      r => r.url().includes('/gpu-env/api/gpu') && r.status() === 200
    );
    await panel(page).locator('.jp-SidePanel-toolbar button').first().click();
    await answer;

    const again = page.waitForResponse(r =>
      r.url().includes('/gpu-env/api/gpu')
    );
    await execute(page, 'jupyter-gpu-env:refresh');
    await again;
  });

  test('asks nothing while another sidebar panel is shown', async ({
    page
  }) => {
    await page.sidebar.openTab(PANEL_ID);
    await expect(memoryBar(page)).toBeVisible();
    await page.sidebar.openTab('filebrowser');
    await expect(panel(page)).toBeHidden();

    let requests = 0;
    page.on('request', request => {
      if (/\/gpu-env\/api\/gpu(\?|$)/.test(request.url())) {
        requests += 1;
      }
    });
    // Two default intervals and a half.
    await page.waitForTimeout(5000);
    expect(requests).toBe(0);

    // Shown again, it catches up at once.
    const answer = page.waitForResponse(r =>
      r.url().includes('/gpu-env/api/gpu')
    );
    await page.sidebar.openTab(PANEL_ID);
    await answer;
  });

  test('is restored after a reload', async ({ page }) => {
    // The layout restorer saves the workspace shortly after the change.
    const saved = page.waitForRequest(
      request =>
        request.method() === 'PUT' &&
        request.url().includes('/api/workspaces') &&
        /"current":"jupyter-gpu-env:sidebar"/.test(request.postData() ?? '')
    );
    await page.sidebar.openTab(PANEL_ID);
    await expect(memoryBar(page)).toBeVisible();
    await saved;

    await page.reload();

    await expect(panel(page)).toBeVisible();
    expect(await page.sidebar.isTabOpen(PANEL_ID)).toBe(true);
    await expect(memoryBar(page)).toBeVisible();
  });

  test('keeps a collapsed section collapsed after a reload', async ({
    page
  }) => {
    await page.sidebar.openTab(PANEL_ID);
    await expect(memoryBar(page)).toBeVisible();
    const title = page.locator(
      '[data-section="memory"] > .jp-GpuEnv-sectionTitle'
    );
    await expect(title).toHaveAttribute('aria-expanded', 'true');
    // UI state goes to the state database, saved with the workspace.
    const saved = page.waitForRequest(
      request =>
        request.method() === 'PUT' &&
        request.url().includes('/api/workspaces') &&
        /jupyter-gpu-env:section:memory/.test(request.postData() ?? '')
    );
    await title.click();
    await expect(title).toHaveAttribute('aria-expanded', 'false');
    await expect(memoryBar(page)).toBeHidden();
    await saved;

    await page.reload();

    await expect(panel(page)).toBeVisible();
    await expect(title).toHaveAttribute('aria-expanded', 'false');
    await expect(memoryBar(page)).toBeHidden();
    // The other sections are as they were.
    await expect(
      page.locator('[data-section="environments"] > .jp-GpuEnv-sectionTitle')
    ).toHaveAttribute('aria-expanded', 'true');

    await title.click();
    await expect(memoryBar(page)).toBeVisible();
  });

  test('follows the dark theme', async ({ page }) => {
    await page.theme.setDarkTheme();
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.sidebar.setWidth(300);
    await page.sidebar.openTab(PANEL_ID);
    await expect(memoryBar(page)).toBeVisible();
    const background = await panel(page).evaluate(
      node => getComputedStyle(node).backgroundColor
    );
    // The dark theme's --jp-layout-color1 is dark: every channel below 100.
    const channels = (background.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    expect(channels).toHaveLength(3);
    for (const channel of channels) {
      expect(channel).toBeLessThan(100);
    }
    await screenshotPanel(page, screenshotPath('gpu-env-panel-dark.png'));
  });
});
