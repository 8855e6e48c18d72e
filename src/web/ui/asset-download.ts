import type { AssetData } from '@assay/client/browser';
import { useMutation } from '@tanstack/react-query';
import { useClient } from './session.tsx';

/**
 * Downloads one component of a ready asset: its presigned URL is fetched at the call, since those expire and
 * are never kept in the page. Storage answers with Content-Disposition: attachment, so the browser saves the
 * file and stays on the page.
 */
export function useComponentDownload(asset: AssetData) {
  const client = useClient();
  return useMutation({
    mutationFn: async (component: string) => {
      const { components } = await client.assets.download(asset.id);
      const target = components[component];
      if (!target) throw new Error(`the asset has no component ${component}`);
      return target.url;
    },
    onSuccess: (url) => window.location.assign(url),
  });
}
