from django.urls import re_path

from climate.dashboard.content.maintenance import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^plan/$', views.PlanView.as_view(), name='plan'),
]
