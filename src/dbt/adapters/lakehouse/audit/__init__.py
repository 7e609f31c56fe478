"""Write-audit-publish: the models staged for audit in an invocation, and who reads them."""
