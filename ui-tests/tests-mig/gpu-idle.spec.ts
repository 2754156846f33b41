/**
 * The idle warning and "Release GPU", on the MIG server. The recorded
 * processes belong to no kernel of this server, so no real idle state can
 * arise here: the answer of `GET gpu` is given one, as the server sends it
 * (models/gpu.py IdleState). The release itself goes to the real server
 * first, then to a stubbed answer that names a kernel.
 */
import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import {
  GPU_ROUTE,
  MIB,
  RELEASE_ROUTE,
  SCREENSHOTS,
  describeRecorded,
  openPanel,
  screenshotSection
} from './helpers';

describeRecorded('GPU idle warning', () => {
  test('warns when the held GPU sits idle and releases it after confirmation', async ({
    page
  }) => {
    const kernelId = '5c1d7e2a-0b7f-4a8e-9d3c-2f6b1a4e8c90';
    await page.route(GPU_ROUTE, async route => {
      const response = await route.fetch();
      const snapshot = await response.json();
      snapshot.kernels = [
        {
          kernel_id: kernelId,
          kernel_name: 'python3',
          notebook_path: 'analysis/train.ipynb',
          pid: 4242,
          processes: 3,
          host_memory_bytes: 1536 * MIB,
          gpu_memory_bytes: 6144 * MIB
        },
        ...snapshot.kernels
      ];
      snapshot.idle = {
        idle: true,
        idle_seconds: 2460,
        threshold_seconds: 1800,
        kernels: [kernelId],
        message:
          'Your kernels hold GPU memory but the GPU has been idle for 41 min. Release it so others can use it.'
      };
      await route.fulfill({ response, json: snapshot });
    });
    await openPanel(page);

    const banner = page.getByTestId('gpu-env-idle');
    await expect(banner).toBeVisible();
    await expect(banner).toContainText('idle for 41 min');
    await expect(
      page.getByTestId('gpu-env-kernel').filter({ hasText: 'train.ipynb' })
    ).toContainText('6.0 GiB');
    await screenshotSection(page, 'gpu-mig-idle.png');

    let posts = 0;
    page.on('request', request => {
      if (RELEASE_ROUTE.test(request.url()) && request.method() === 'POST') {
        posts += 1;
      }
    });

    // Cancelled: nothing is asked.
    await page.getByTestId('gpu-env-release').click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog.getByTestId('gpu-env-release-dialog')).toContainText(
      'analysis/train.ipynb'
    );
    await expect(dialog).toContainText('6.0 GiB GPU');
    await dialog.locator('.jp-Dialog-content').screenshot({
      path: path.join(SCREENSHOTS, 'gpu-mig-release-dialog.png')
    });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toHaveCount(0);
    expect(posts).toBe(0);

    // Confirmed: the real server answers; no kernel of its own holds memory.
    await page.getByTestId('gpu-env-release').click();
    const answered = page.waitForResponse(
      r => RELEASE_ROUTE.test(r.url()) && r.request().method() === 'POST'
    );
    await dialog.getByRole('button', { name: 'Shut down kernel' }).click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.request().postData()).toBe('{}');
    expect(await response.json()).toEqual({ shut_down: [] });
    await expect(
      page.getByText('Nothing to release: no kernel holds GPU memory any more.')
    ).toBeVisible();

    // When the server shuts kernels down, the notification names them.
    await page.route(RELEASE_ROUTE, route =>
      route.fulfill({ status: 200, json: { shut_down: [kernelId] } })
    );
    await page.getByTestId('gpu-env-release').click();
    await dialog.getByRole('button', { name: 'Shut down kernel' }).click();
    await expect(
      page.getByText('GPU released: shut down 1 kernel (train.ipynb).')
    ).toBeVisible();
    expect(posts).toBe(2);

    await page.theme.setDarkTheme();
    await expect(banner).toBeVisible();
    await screenshotSection(page, 'gpu-mig-idle-dark.png');
  });
});
