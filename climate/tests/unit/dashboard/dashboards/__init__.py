"""The dashboards the tests' Horizon has: Project and Admin, without
Horizon's own panels (the tests render Climate's panels only, so no other
service's API is called to draw the navigation)."""
