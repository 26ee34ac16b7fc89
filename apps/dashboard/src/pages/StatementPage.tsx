import { PageTitle } from '../components/PageTitle';
import { StatementView } from '../components/StatementView';

export function StatementPage() {
  return (
    <>
      <PageTitle title="Statement" description="Credits and settled requests, with the balance." />
      <StatementView account={null} />
    </>
  );
}
