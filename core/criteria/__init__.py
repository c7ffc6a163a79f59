"""Acceptance criteria: extraction from task text and mechanical verification in a checkout."""
