"""Side effects of the pickup domain: SQL, the turnstile controllers, guardian notifications."""
