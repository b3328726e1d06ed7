# The user menu of every page links to the settings dashboard.
DASHBOARD = 'settings'
ADD_INSTALLED_APPS = ['openstack_dashboard.dashboards.settings']
