"""What people see: the sticky comment, the job summary, the action's outputs."""
