"""Route Health: everything that ships in the Lambda code asset."""
