import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import '@mantine/notifications/styles.css';
import { createTheme, MantineProvider, Modal } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import { Notifications } from '@mantine/notifications';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { isApiError } from './api/client';
import { replaceSession } from './api/session';
import { router } from './routes';

const theme = createTheme({
  primaryColor: 'teal',
  defaultRadius: 'md',
  components: {
    // Every dialog's × is announced (and found by the browser tests) as "Close".
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
});

// A session that ended (expired, signed out elsewhere) sends the viewer back to sign-in.
const onError = (error: unknown) => {
  if (isApiError(error, 'session_required')) replaceSession(queryClient, null);
};
const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      // Refusals (4xx) are answers, not glitches: only network and 5xx failures are retried.
      retry: (count, error) =>
        count < 2 && !(isApiError(error) && error.status < 500 && error.status > 0),
      refetchOnWindowFocus: true,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme}>
      <QueryClientProvider client={queryClient}>
        <ModalsProvider>
          <Notifications position="top-right" />
          <RouterProvider router={router} />
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
