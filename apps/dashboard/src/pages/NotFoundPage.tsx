import { Button } from '@mantine/core';
import { Link } from 'react-router';
import { AuthCard } from '../components/AuthCard';

export function NotFoundPage() {
  return (
    <AuthCard title="Page not found" subtitle="This address does not exist in the dashboard.">
      <Button component={Link} to="/">
        Back to the dashboard
      </Button>
    </AuthCard>
  );
}
