import { Button, Center } from '@mantine/core';
import { ErrorAlert } from './QueryState';

interface PagedQuery {
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  isFetchNextPageError: boolean;
  error: unknown;
  fetchNextPage: () => unknown;
}

/** "Load more" under a cursor-paged list, with the failed page's error. */
export function LoadMore({ query }: { query: PagedQuery }) {
  return (
    <>
      {query.isFetchNextPageError && <ErrorAlert error={query.error} />}
      {query.hasNextPage && (
        <Center>
          <Button
            variant="default"
            loading={query.isFetchingNextPage}
            onClick={() => void query.fetchNextPage()}
          >
            Load more
          </Button>
        </Center>
      )}
    </>
  );
}
