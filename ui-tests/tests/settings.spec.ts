/**
 * The `refreshInterval` setting reaches the poll; the settings are only
 * settings.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import { PANEL_ID, execute, memoryBar } from './helpers';

test.use({
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    'jupyter-gpu-env:plugin': { refreshInterval: 60000 }
  }
});

test('a long refresh interval means no request in between', async ({
  page
}) => {
  let requests = 0;
  page.on('request', request => {
    if (/\/gpu-env\/api\/gpu(\?|$)/.test(request.url())) {
      requests += 1;
    }
  });
  await page.sidebar.openTab(PANEL_ID);
  await expect(memoryBar(page)).toBeVisible();
  const afterOpen = requests;
  // The default interval (2 s) would have asked twice by now.
  await page.waitForTimeout(5000);
  expect(requests).toBe(afterOpen);

  // The refresh command still asks at once.
  await execute(page, 'jupyter-gpu-env:refresh');
  await expect.poll(() => requests).toBe(afterOpen + 1);
});

test('the Settings Editor offers only real settings', async ({ page }) => {
  // UI state (last-used dialog values, collapsed sections) is not a setting.
  const properties = await page.evaluate(async () => {
    const settings = window.jupyterapp.serviceManager.settings;
    const keys = async (id: string) =>
      Object.keys((await settings.fetch(id)).schema.properties ?? {}).sort();
    return {
      plugin: await keys('jupyter-gpu-env:plugin'),
      jobs: await keys('jupyter-gpu-env:jobs')
    };
  });
  expect(properties).toEqual({
    plugin: ['refreshInterval'],
    jobs: ['notifyOnEnd', 'notifyOnGpuIdle']
  });
});
